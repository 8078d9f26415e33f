#include <lcms2.h>

// lcms2's pixel-format macros are function-like, which Swift does not import;
// these constants carry the ones ImageOps uses.
static const cmsUInt32Number VS_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number VS_TYPE_RGBA_16 = TYPE_RGBA_16;
static const cmsUInt32Number VS_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number VS_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number VS_TYPE_CMYK_8 = TYPE_CMYK_8;
static const cmsUInt32Number VS_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;

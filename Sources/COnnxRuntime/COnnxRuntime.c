// Loads ONNX Runtime at run time: vsearch never links against it (see include/COnnxRuntime.h).
#include "COnnxRuntime.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// The index of every typed member of OrtApi, as the C API's tables (versions 1-5) fix it. A wrong placeholder count
// in the header fails the build here instead of calling the wrong function at run time.
#define VS_ORT_INDEX(member, index) \
    _Static_assert(offsetof(OrtApi, member) == (index) * sizeof(void *), #member " must be entry " #index)

VS_ORT_INDEX(CreateStatus, 0);
VS_ORT_INDEX(GetErrorCode, 1);
VS_ORT_INDEX(GetErrorMessage, 2);
VS_ORT_INDEX(CreateEnv, 3);
VS_ORT_INDEX(CreateEnvWithCustomLogger, 4);
VS_ORT_INDEX(CreateSession, 7);
VS_ORT_INDEX(CreateSessionFromArray, 8);
VS_ORT_INDEX(Run, 9);
VS_ORT_INDEX(CreateSessionOptions, 10);
VS_ORT_INDEX(SetSessionExecutionMode, 13);
VS_ORT_INDEX(EnableMemPattern, 16);
VS_ORT_INDEX(DisableMemPattern, 17);
VS_ORT_INDEX(EnableCpuMemArena, 18);
VS_ORT_INDEX(DisableCpuMemArena, 19);
VS_ORT_INDEX(SetSessionGraphOptimizationLevel, 23);
VS_ORT_INDEX(SetIntraOpNumThreads, 24);
VS_ORT_INDEX(SetInterOpNumThreads, 25);
VS_ORT_INDEX(SessionGetInputCount, 30);
VS_ORT_INDEX(SessionGetOutputCount, 31);
VS_ORT_INDEX(SessionGetInputTypeInfo, 33);
VS_ORT_INDEX(SessionGetOutputTypeInfo, 34);
VS_ORT_INDEX(SessionGetInputName, 36);
VS_ORT_INDEX(SessionGetOutputName, 37);
VS_ORT_INDEX(CreateTensorWithDataAsOrtValue, 49);
VS_ORT_INDEX(IsTensor, 50);
VS_ORT_INDEX(GetTensorMutableData, 51);
VS_ORT_INDEX(CastTypeInfoToTensorInfo, 55);
VS_ORT_INDEX(GetTensorElementType, 60);
VS_ORT_INDEX(GetDimensionsCount, 61);
VS_ORT_INDEX(GetDimensions, 62);
VS_ORT_INDEX(GetTensorShapeElementCount, 64);
VS_ORT_INDEX(GetTensorTypeAndShape, 65);
VS_ORT_INDEX(CreateCpuMemoryInfo, 69);
VS_ORT_INDEX(AllocatorFree, 76);
VS_ORT_INDEX(GetAllocatorWithDefaultOptions, 78);
VS_ORT_INDEX(ReleaseEnv, 92);
VS_ORT_INDEX(ReleaseStatus, 93);
VS_ORT_INDEX(ReleaseMemoryInfo, 94);
VS_ORT_INDEX(ReleaseSession, 95);
VS_ORT_INDEX(ReleaseValue, 96);
VS_ORT_INDEX(ReleaseTypeInfo, 98);
VS_ORT_INDEX(ReleaseTensorTypeAndShapeInfo, 99);
VS_ORT_INDEX(ReleaseSessionOptions, 100);
VS_ORT_INDEX(AddSessionConfigEntry, 130);
_Static_assert(sizeof(OrtApi) == 131 * sizeof(void *), "OrtApi is declared through entry 130");
_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "function pointers are pointer-sized");

static void vs_copy(char *out, size_t capacity, const char *text) {
    if (out == NULL || capacity == 0) return;
    if (text == NULL) text = "";
    size_t n = strlen(text);
    if (n >= capacity) n = capacity - 1;
    memcpy(out, text, n);
    out[n] = '\0';
}

static void vs_format(char *out, size_t capacity, const char *format, ...) {
    if (out == NULL || capacity == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(out, capacity, format, args);
    va_end(args);
    // One line: the loader's messages can carry a newline.
    for (char *p = out; *p != '\0'; p++) {
        if (*p == '\n' || *p == '\r') *p = ' ';
    }
}

static const char *vs_dlerror(void) {
    const char *message = dlerror();
    return message != NULL ? message : "no reason given";
}

typedef const OrtApiBase *(*vs_ort_get_api_base_fn)(void);

const OrtApi *vs_ort_load(const char *library_path, uint32_t api_version, char *error, size_t error_capacity,
                          char *version_out, size_t version_capacity) {
    vs_copy(error, error_capacity, "");
    vs_copy(version_out, version_capacity, "");

    if (library_path == NULL || library_path[0] == '\0') {
        vs_format(error, error_capacity, "no ONNX Runtime library path was given");
        return NULL;
    }

    (void)dlerror();  // clear any earlier error of this thread
    void *handle = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        vs_format(error, error_capacity, "cannot load the ONNX Runtime library: %s", vs_dlerror());
        return NULL;
    }

    (void)dlerror();
    void *symbol = dlsym(handle, "OrtGetApiBase");
    if (symbol == NULL) {
        vs_format(error, error_capacity, "not an ONNX Runtime library (it has no OrtGetApiBase): %s", vs_dlerror());
        dlclose(handle);
        return NULL;
    }

    // POSIX guarantees a dlsym result for a function converts to a function pointer.
    vs_ort_get_api_base_fn get_api_base;
    memcpy(&get_api_base, &symbol, sizeof get_api_base);
    // From here on the library has run its own code: it is never closed again, even on failure (ONNX Runtime
    // does not unload cleanly: closing it after a refused version leaks what its static objects allocated).
    const OrtApiBase *base = get_api_base();
    if (base == NULL || base->GetApi == NULL || base->GetVersionString == NULL) {
        vs_format(error, error_capacity, "not a usable ONNX Runtime library: OrtGetApiBase returned no API");
        return NULL;
    }

    const char *version = base->GetVersionString();
    if (version == NULL) version = "unknown";
    vs_copy(version_out, version_capacity, version);

    const OrtApi *api = base->GetApi(api_version);
    if (api == NULL) {
        vs_format(error, error_capacity, "ONNX Runtime %s is too old: it does not offer C API version %u", version,
                  (unsigned)api_version);
        return NULL;
    }
    // Kept open for the life of the process: the table points into it.
    return api;
}

// Only the header matters: SwiftPM needs one source file to build a C target.
#include "CFuzzerDriver.h"

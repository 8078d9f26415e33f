// libFuzzer's driver, as Swift sees it. libFuzzer (linked by -sanitize=fuzzer) defines it.
#ifndef VSEARCH_FUZZ_CFUZZERDRIVER_H
#define VSEARCH_FUZZ_CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the process's arguments, calling `testOneInput` for every input; returns
/// the process's exit status. Available since LLVM 11.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*testOneInput)(const uint8_t *data, size_t size));

#endif

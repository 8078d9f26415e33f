// Exercises every function Sources/COnnxRuntime declares against a real ONNX Runtime library, with the tiny model
// of make_tiny_model.py: the loader's failure messages, a session from memory and from a path, names, types and
// shapes, a batch of 2 run and compared with the reference, and the library's error statuses. check_c_api.sh
// builds and runs it; it prints each check and ends with "N passed, N failed".
//
//     check_c_api LIBRARY TINY_DIR
#include "COnnxRuntime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;
static const OrtApi *api;

static void check(int ok, const char *what, const char *detail) {
    if (ok) passed++; else failed++;
    printf("%s  %s%s%s\n", ok ? "ok  " : "FAIL", what, detail && *detail ? ": " : "", detail ? detail : "");
}

// Takes a status: reports it (when one was expected, its message is the detail) and releases it.
static OrtErrorCode status_check(OrtStatus *status, int expect_error, const char *what) {
    if (status == NULL) {
        check(!expect_error, what, expect_error ? "no error reported" : "");
        return ORT_OK;
    }
    OrtErrorCode code = api->GetErrorCode(status);
    char detail[1200];
    snprintf(detail, sizeof detail, "code %d, \"%s\"", (int)code, api->GetErrorMessage(status));
    check(expect_error, what, detail);
    api->ReleaseStatus(status);
    return code;
}

static unsigned char *read_file(const char *dir, const char *name, size_t *size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void loader_failure(const char *what, const char *path, uint32_t version, const char *expect) {
    char error[1024], ver[64];
    const OrtApi *got = vs_ort_load(path, version, error, sizeof error, ver, sizeof ver);
    char detail[1200];
    snprintf(detail, sizeof detail, "\"%s\"%s%s", error, ver[0] ? " version " : "", ver);
    check(got == NULL && strstr(error, expect) != NULL, what, detail);
}

static void dims_string(const int64_t *dims, size_t count, char *out, size_t capacity) {
    size_t used = (size_t)snprintf(out, capacity, "[");
    for (size_t i = 0; i < count && used < capacity; i++)
        used += (size_t)snprintf(out + used, capacity - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (used < capacity) snprintf(out + used, capacity - used, "]");
}

// Names, element types and shapes of a session's inputs or outputs; expects one float tensor of `expect` dims.
static void describe(OrtSession *session, int input, const char *expect_name, const char *expect_dims) {
    const char *side = input ? "input" : "output";
    size_t count = 0;
    char what[128], detail[256];
    status_check((input ? api->SessionGetInputCount : api->SessionGetOutputCount)(session, &count), 0,
                 input ? "SessionGetInputCount" : "SessionGetOutputCount");
    snprintf(detail, sizeof detail, "%zu", count);
    snprintf(what, sizeof what, "one %s", side);
    check(count == 1, what, detail);

    OrtAllocator *allocator = NULL;
    status_check(api->GetAllocatorWithDefaultOptions(&allocator), 0, "GetAllocatorWithDefaultOptions");
    char *name = NULL;
    status_check((input ? api->SessionGetInputName : api->SessionGetOutputName)(session, 0, allocator, &name), 0,
                 input ? "SessionGetInputName" : "SessionGetOutputName");
    snprintf(what, sizeof what, "%s name", side);
    check(name != NULL && strcmp(name, expect_name) == 0, what, name);
    status_check(api->AllocatorFree(allocator, name), 0, "AllocatorFree");

    OrtTypeInfo *type_info = NULL;
    status_check((input ? api->SessionGetInputTypeInfo : api->SessionGetOutputTypeInfo)(session, 0, &type_info), 0,
                 input ? "SessionGetInputTypeInfo" : "SessionGetOutputTypeInfo");
    const OrtTensorTypeAndShapeInfo *tensor = NULL;
    status_check(api->CastTypeInfoToTensorInfo(type_info, &tensor), 0, "CastTypeInfoToTensorInfo");
    check(tensor != NULL, "the type is a tensor", "");
    if (tensor != NULL) {
        ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        status_check(api->GetTensorElementType(tensor, &type), 0, "GetTensorElementType");
        snprintf(detail, sizeof detail, "%d", (int)type);
        snprintf(what, sizeof what, "%s element type float", side);
        check(type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, what, detail);
        size_t rank = 0;
        status_check(api->GetDimensionsCount(tensor, &rank), 0, "GetDimensionsCount");
        int64_t dims[8] = {0};
        if (rank <= 8) status_check(api->GetDimensions(tensor, dims, rank), 0, "GetDimensions");
        dims_string(dims, rank, detail, sizeof detail);
        snprintf(what, sizeof what, "%s dims (dynamic batch = -1)", side);
        check(strcmp(detail, expect_dims) == 0, what, detail);
        size_t elements = 0;
        OrtStatus *status = api->GetTensorShapeElementCount(tensor, &elements);
        if (status != NULL) {
            status_check(status, 1, "GetTensorShapeElementCount of a dynamic shape reports");
        } else {
            snprintf(detail, sizeof detail, "%zu (as signed: %lld)", elements, (long long)(int64_t)elements);
            check(1, "GetTensorShapeElementCount of a dynamic shape", detail);
        }
    }
    api->ReleaseTypeInfo(type_info);
}

static OrtSessionOptions *make_options(void) {
    OrtSessionOptions *options = NULL;
    status_check(api->CreateSessionOptions(&options), 0, "CreateSessionOptions");
    status_check(api->SetIntraOpNumThreads(options, 1), 0, "SetIntraOpNumThreads(1)");
    status_check(api->SetInterOpNumThreads(options, 1), 0, "SetInterOpNumThreads(1)");
    status_check(api->SetSessionGraphOptimizationLevel(options, ORT_ENABLE_ALL), 0,
                 "SetSessionGraphOptimizationLevel(ORT_ENABLE_ALL)");
    status_check(api->SetSessionExecutionMode(options, ORT_SEQUENTIAL), 0, "SetSessionExecutionMode");
    status_check(api->DisableMemPattern(options), 0, "DisableMemPattern");
    status_check(api->EnableMemPattern(options), 0, "EnableMemPattern");
    status_check(api->DisableCpuMemArena(options), 0, "DisableCpuMemArena");
    status_check(api->EnableCpuMemArena(options), 0, "EnableCpuMemArena");
    return options;
}

// Runs `batch` inputs through the session and compares with expected[0 ..< batch * 5].
static void run_and_compare(OrtSession *session, OrtMemoryInfo *memory, float *input, size_t batch,
                            const float *expected) {
    int64_t shape[4] = {(int64_t)batch, 3, 4, 4};
    OrtValue *tensor = NULL;
    char what[128], detail[512];
    status_check(api->CreateTensorWithDataAsOrtValue(memory, input, batch * 48 * sizeof(float), shape, 4,
                                                     ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &tensor),
                 0, "CreateTensorWithDataAsOrtValue");
    const char *input_names[] = {"pixels"};
    const char *output_names[] = {"embedding"};
    OrtValue *output = NULL;
    snprintf(what, sizeof what, "Run, batch of %zu", batch);
    status_check(api->Run(session, NULL, input_names, (const OrtValue *const *)&tensor, 1, output_names, 1, &output),
                 0, what);
    if (output == NULL) { api->ReleaseValue(tensor); return; }

    int is_tensor = 0;
    status_check(api->IsTensor(output, &is_tensor), 0, "IsTensor");
    check(is_tensor == 1, "the output is a tensor", "");
    OrtTensorTypeAndShapeInfo *info = NULL;
    status_check(api->GetTensorTypeAndShape(output, &info), 0, "GetTensorTypeAndShape");
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    status_check(api->GetTensorElementType(info, &type), 0, "GetTensorElementType (value)");
    size_t rank = 0, elements = 0;
    int64_t dims[8] = {0};
    status_check(api->GetDimensionsCount(info, &rank), 0, "GetDimensionsCount (value)");
    if (rank <= 8) status_check(api->GetDimensions(info, dims, rank), 0, "GetDimensions (value)");
    status_check(api->GetTensorShapeElementCount(info, &elements), 0, "GetTensorShapeElementCount (value)");
    api->ReleaseTensorTypeAndShapeInfo(info);
    char dims_text[64];
    dims_string(dims, rank, dims_text, sizeof dims_text);
    snprintf(detail, sizeof detail, "type %d, dims %s, %zu elements", (int)type, dims_text, elements);
    check(type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && rank == 2 && dims[0] == (int64_t)batch && dims[1] == 5
              && elements == batch * 5,
          "output float [batch, 5]", detail);

    float *data = NULL;
    status_check(api->GetTensorMutableData(output, (void **)&data), 0, "GetTensorMutableData");
    if (data != NULL && elements == batch * 5) {
        double worst = 0;
        size_t used = 0;
        for (size_t i = 0; i < elements; i++) {
            double d = fabs((double)data[i] - (double)expected[i]);
            if (d > worst) worst = d;
            if (used < sizeof detail) used += (size_t)snprintf(detail + used, sizeof detail - used, "%.6f ", data[i]);
        }
        if (used < sizeof detail) snprintf(detail + used, sizeof detail - used, "(largest difference %.3g)", worst);
        snprintf(what, sizeof what, "output equals the reference within 1e-5, batch of %zu", batch);
        check(worst <= 1e-5, what, detail);
    }
    api->ReleaseValue(output);
    api->ReleaseValue(tensor);
}

static int logged = 0;
static void count_log(void *param, OrtLoggingLevel severity, const char *category, const char *logid,
                      const char *code_location, const char *message) {
    (void)param; (void)severity; (void)category; (void)logid; (void)code_location; (void)message;
    logged++;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: check_c_api LIBRARY TINY_DIR\n");
        return 2;
    }
    const char *library = argv[1], *dir = argv[2];
    size_t model_size = 0, input_size = 0, expected_size = 0;
    unsigned char *model = read_file(dir, "tiny.onnx", &model_size);
    float *input = (float *)read_file(dir, "input.f32", &input_size);
    float *expected = (float *)read_file(dir, "expected.f32", &expected_size);
    if (input_size != 96 * sizeof(float) || expected_size != 10 * sizeof(float)) {
        fprintf(stderr, "check_c_api: %s does not hold make_tiny_model.py's files\n", dir);
        return 2;
    }
    char model_path[4096], missing_path[4096];
    snprintf(model_path, sizeof model_path, "%s/tiny.onnx", dir);
    snprintf(missing_path, sizeof missing_path, "%s/no-such-model.onnx", dir);

    // The loader's failures.
    loader_failure("no path", "", VS_ORT_API_VERSION, "no ONNX Runtime library path");
    loader_failure("missing library", "/nonexistent/libonnxruntime.so.1", VS_ORT_API_VERSION,
                   "No such file or directory");
    loader_failure("a file that is not a library", model_path, VS_ORT_API_VERSION, "cannot load");
    loader_failure("a library that is not ONNX Runtime", "libm.so.6", VS_ORT_API_VERSION,
                   "not an ONNX Runtime library");
    loader_failure("an API version newer than the library", library, 9999, "is too old");
    {
        char error[16], ver[4];
        const OrtApi *got = vs_ort_load("/nonexistent/x", 1, error, sizeof error, ver, sizeof ver);
        check(got == NULL && strlen(error) == sizeof error - 1, "messages are cut to the capacity", error);
        check(vs_ort_load("/nonexistent/x", 1, NULL, 0, NULL, 0) == NULL, "NULL buffers are allowed", "");
    }

    // The library.
    char error[1024], version[64];
    api = vs_ort_load(library, VS_ORT_API_VERSION, error, sizeof error, version, sizeof version);
    char detail[1200];
    snprintf(detail, sizeof detail, "C API version %u of ONNX Runtime %s%s%s", VS_ORT_API_VERSION, version,
             api ? "" : ": ", api ? "" : error);
    check(api != NULL, "vs_ort_load", detail);
    if (api == NULL) goto done;
    {
        char e2[256], v2[64];
        const OrtApi *again = vs_ort_load(library, VS_ORT_API_VERSION, e2, sizeof e2, v2, sizeof v2);
        check(again == api, "loading again returns the same table", "");
    }

    // Statuses.
    OrtStatus *made = api->CreateStatus(ORT_INVALID_ARGUMENT, "made here");
    check(made != NULL && api->GetErrorCode(made) == ORT_INVALID_ARGUMENT
              && strcmp(api->GetErrorMessage(made), "made here") == 0,
          "CreateStatus / GetErrorCode / GetErrorMessage", made ? api->GetErrorMessage(made) : "");
    api->ReleaseStatus(made);
    api->ReleaseStatus(NULL);

    // A custom logger (verbose, counted), then released: the environment is per process.
    {
        OrtEnv *env = NULL;
        status_check(api->CreateEnvWithCustomLogger(count_log, NULL, ORT_LOGGING_LEVEL_VERBOSE, "check", &env), 0,
                     "CreateEnvWithCustomLogger(VERBOSE)");
        OrtSessionOptions *options = NULL;
        status_check(api->CreateSessionOptions(&options), 0, "CreateSessionOptions");
        OrtSession *session = NULL;
        status_check(api->CreateSessionFromArray(env, model, model_size, options, &session), 0,
                     "CreateSessionFromArray (custom logger)");
        snprintf(detail, sizeof detail, "%d messages", logged);
        check(logged > 0, "the custom logger received the session's verbose messages", detail);
        api->ReleaseSession(session);
        api->ReleaseSessionOptions(options);
        api->ReleaseEnv(env);
    }

    OrtEnv *env = NULL, *env2 = NULL;
    status_check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "vsearch-check", &env), 0, "CreateEnv(WARNING)");
    status_check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "vsearch-check", &env2), 0, "CreateEnv again");
    check(env != NULL && env == env2, "the environment is one per process", "");
    api->ReleaseEnv(env2);
    if (env == NULL) goto done;

    OrtSessionOptions *options = make_options();
    OrtMemoryInfo *memory = NULL;
    status_check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory), 0, "CreateCpuMemoryInfo");

    for (int from_path = 0; from_path <= 1; from_path++) {
        OrtSession *session = NULL;
        if (from_path)
            status_check(api->CreateSession(env, model_path, options, &session), 0, "CreateSession (path)");
        else
            status_check(api->CreateSessionFromArray(env, model, model_size, options, &session), 0,
                         "CreateSessionFromArray (memory)");
        if (session == NULL) continue;
        describe(session, 1, "pixels", "[-1, 3, 4, 4]");
        describe(session, 0, "embedding", "[-1, 5]");
        run_and_compare(session, memory, input, 2, expected);
        run_and_compare(session, memory, input + 48, 1, expected + 5);

        if (!from_path) {
            // Errors at run time.
            float wrong[2 * 3 * 5 * 5] = {0};
            int64_t wrong_shape[4] = {2, 3, 5, 5};
            OrtValue *tensor = NULL, *output = NULL;
            status_check(api->CreateTensorWithDataAsOrtValue(memory, wrong, sizeof wrong, wrong_shape, 4,
                                                             ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &tensor),
                         0, "CreateTensorWithDataAsOrtValue [2, 3, 5, 5]");
            const char *in_names[] = {"pixels"}, *out_names[] = {"embedding"}, *bad_names[] = {"nope"};
            status_check(api->Run(session, NULL, in_names, (const OrtValue *const *)&tensor, 1, out_names, 1, &output),
                         1, "Run with the wrong input shape fails");
            api->ReleaseValue(output);
            output = NULL;
            status_check(api->Run(session, NULL, bad_names, (const OrtValue *const *)&tensor, 1, out_names, 1,
                                  &output),
                         1, "Run with an unknown input name fails");
            api->ReleaseValue(output);
            api->ReleaseValue(tensor);
            tensor = NULL;
            int64_t shape[4] = {2, 3, 4, 4};
            status_check(api->CreateTensorWithDataAsOrtValue(memory, wrong, 10, shape, 4,
                                                             ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &tensor),
                         1, "a tensor over too small a buffer fails");
            api->ReleaseValue(tensor);
        }
        api->ReleaseSession(session);
    }

    // Damaged and missing models: typed statuses, no session.
    {
        OrtSession *session = NULL;
        OrtErrorCode code = status_check(api->CreateSessionFromArray(env, model, model_size / 2, options, &session),
                                         1, "a truncated model fails");
        check(session == NULL && code != ORT_OK, "no session from a truncated model", "");
        unsigned char *garbled = malloc(model_size);
        for (size_t i = 0; i < model_size; i++) garbled[i] = (unsigned char)(model[i] ^ 0x5A);
        session = NULL;
        status_check(api->CreateSessionFromArray(env, garbled, model_size, options, &session), 1,
                     "a garbled model fails");
        check(session == NULL, "no session from a garbled model", "");
        free(garbled);
        session = NULL;
        status_check(api->CreateSessionFromArray(env, "", 0, options, &session), 1, "an empty model fails");
        session = NULL;
        code = status_check(api->CreateSession(env, missing_path, options, &session), 1, "a missing model file fails");
        snprintf(detail, sizeof detail, "code %d", (int)code);
        check(code == ORT_NO_SUCHFILE, "a missing model file is ORT_NO_SUCHFILE", detail);
    }

    api->ReleaseMemoryInfo(memory);
    api->ReleaseSessionOptions(options);
    api->ReleaseEnv(env);

done:
    free(model);
    free(input);
    free(expected);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && api != NULL ? 0 : 1;
}

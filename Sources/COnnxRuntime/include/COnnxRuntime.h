#ifndef VSEARCH_CONNXRUNTIME_H
#define VSEARCH_CONNXRUNTIME_H

// ONNX Runtime's C API, declared by vsearch for itself, and a loader that opens the library at run time.
//
// No package ships onnxruntime_c_api.h, and vsearch must build (and a library consumer link) without ONNX
// Runtime, so nothing here links against it: vs_ort_load() dlopen()s the library that set-up placed (or any
// path the caller names) and returns its function table. Everything below is written from the API's
// documented, ABI-stable layout:
//
//  - the library exports one symbol, `const OrtApiBase *OrtGetApiBase(void)`;
//  - OrtApiBase is { GetApi(version), GetVersionString() };
//  - GetApi(version) returns the OrtApi table: a struct of function pointers whose order never changes once
//    a version has shipped (new functions are only ever appended). A runtime returns NULL for a version newer
//    than it knows.
//
// Only what vsearch calls is declared with its type. Every member before the last one we use is present, in
// order, so the offsets are right: the ones we do not call are `void *` placeholders named after the function
// they stand for. The last typed member, AddSessionConfigEntry (index 130), came with C API version 5 (ONNX
// Runtime 1.5), so VS_ORT_API_VERSION is 5 and any ONNX Runtime from 1.5 on serves it. COnnxRuntime.c checks
// each typed member's index with a static assertion; the numbers in the comments below are those indices.
//
// The struct is shorter than the library's table: use it only through the pointer vs_ort_load returns; never
// copy it or take its size.
//
// Conventions of the API (all functions):
//  - a function returning OrtStatus * returns NULL on success; otherwise a status the caller must release
//    with ReleaseStatus after reading GetErrorCode / GetErrorMessage;
//  - Release* functions accept NULL;
//  - strings are NUL-terminated UTF-8; on Linux and macOS a model path (ORTCHAR_T) is `char`.
//
// Linux and macOS only (Windows uses __stdcall and wchar_t paths; vsearch does not build there).

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The C API version vsearch asks for: the lowest that has every function declared below (AddSessionConfigEntry
/// is version 5's; every other one version 1's).
#define VS_ORT_API_VERSION 5u

// ---------------------------------------------------------------------------------------------------------
// Enumerations (values as documented; the library may return values newer than those listed, so code that
// switches on them needs a default).

typedef enum OrtErrorCode {
    ORT_OK = 0,
    ORT_FAIL = 1,
    ORT_INVALID_ARGUMENT = 2,
    ORT_NO_SUCHFILE = 3,
    ORT_NO_MODEL = 4,
    ORT_ENGINE_ERROR = 5,
    ORT_RUNTIME_EXCEPTION = 6,
    ORT_INVALID_PROTOBUF = 7,
    ORT_MODEL_LOADED = 8,
    ORT_NOT_IMPLEMENTED = 9,
    ORT_INVALID_GRAPH = 10,
    ORT_EP_FAIL = 11,
    ORT_MODEL_LOAD_CANCELED = 12,         // later 1.x releases
    ORT_MODEL_REQUIRES_COMPILATION = 13,  // later 1.x releases
    ORT_NOT_FOUND = 14,                   // later 1.x releases
} OrtErrorCode;

/// The element type of a tensor (the values of ONNX's TensorProto.DataType).
typedef enum ONNXTensorElementDataType {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,  // float
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,
} ONNXTensorElementDataType;

/// Log severity: messages below the level given to CreateEnv are not shown.
typedef enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE = 0,
    ORT_LOGGING_LEVEL_INFO = 1,
    ORT_LOGGING_LEVEL_WARNING = 2,
    ORT_LOGGING_LEVEL_ERROR = 3,
    ORT_LOGGING_LEVEL_FATAL = 4,
} OrtLoggingLevel;

typedef enum GraphOptimizationLevel {
    ORT_DISABLE_ALL = 0,
    ORT_ENABLE_BASIC = 1,
    ORT_ENABLE_EXTENDED = 2,
    ORT_ENABLE_LAYOUT = 3,  // recent 1.2x releases only; older runtimes refuse it (use ORT_ENABLE_ALL)
    ORT_ENABLE_ALL = 99,
} GraphOptimizationLevel;

typedef enum ExecutionMode {
    ORT_SEQUENTIAL = 0,
    ORT_PARALLEL = 1,
} ExecutionMode;

typedef enum OrtAllocatorType {
    OrtInvalidAllocator = -1,
    OrtDeviceAllocator = 0,
    OrtArenaAllocator = 1,
} OrtAllocatorType;

typedef enum OrtMemType {
    OrtMemTypeCPUInput = -2,   // CPU memory used by a non-CPU execution provider
    OrtMemTypeCPUOutput = -1,  // CPU-accessible memory written by a non-CPU execution provider
    OrtMemTypeCPU = -1,        // = OrtMemTypeCPUOutput
    OrtMemTypeDefault = 0,     // the execution provider's default memory (for the CPU provider: CPU memory)
} OrtMemType;

// ---------------------------------------------------------------------------------------------------------
// Opaque objects (created and released by the library only).

typedef struct OrtEnv OrtEnv;
typedef struct OrtStatus OrtStatus;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtSession OrtSession;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtSessionOptions OrtSessionOptions;
/// An allocator (the documented layout; vsearch only passes the library's own back to it, e.g. AllocatorFree).
typedef struct OrtAllocator {
    uint32_t version;
    void *(*Alloc)(struct OrtAllocator *this_, size_t size);
    void (*Free)(struct OrtAllocator *this_, void *p);
    const OrtMemoryInfo *(*Info)(const struct OrtAllocator *this_);
} OrtAllocator;

/// A custom log sink for CreateEnvWithCustomLogger. Called on the library's threads.
typedef void (*OrtLoggingFunction)(void *param, OrtLoggingLevel severity, const char *category,
                                   const char *logid, const char *code_location, const char *message);

// ---------------------------------------------------------------------------------------------------------
// The function table.

typedef struct OrtApi {
    /* 0 */ OrtStatus *(*CreateStatus)(OrtErrorCode code, const char *message);
    /* 1 */ OrtErrorCode (*GetErrorCode)(const OrtStatus *status);
    /// The message stays owned by the status: copy it before ReleaseStatus.
    /* 2 */ const char *(*GetErrorMessage)(const OrtStatus *status);

    /// The environment is one per process inside the library: a second CreateEnv returns the same one (with
    /// the first call's log level), counted; each must be released.
    /* 3 */ OrtStatus *(*CreateEnv)(OrtLoggingLevel log_severity_level, const char *logid, OrtEnv **out);
    /* 4 */ OrtStatus *(*CreateEnvWithCustomLogger)(OrtLoggingFunction logging_function, void *logger_param,
                                                    OrtLoggingLevel log_severity_level, const char *logid,
                                                    OrtEnv **out);
    /* 5 */ void *unused_EnableTelemetryEvents;
    /* 6 */ void *unused_DisableTelemetryEvents;

    /* 7 */ OrtStatus *(*CreateSession)(const OrtEnv *env, const char *model_path,
                                        const OrtSessionOptions *options, OrtSession **out);
    /// The bytes are read during the call only.
    /* 8 */ OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *model_data,
                                                 size_t model_data_length, const OrtSessionOptions *options,
                                                 OrtSession **out);
    /// run_options may be NULL. outputs: an array of output_names_len pointers; NULL entries are filled with
    /// new values (release each with ReleaseValue).
    /* 9 */ OrtStatus *(*Run)(OrtSession *session, const OrtRunOptions *run_options,
                              const char *const *input_names, const OrtValue *const *inputs, size_t input_len,
                              const char *const *output_names, size_t output_names_len, OrtValue **outputs);

    /* 10 */ OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **out);
    /* 11 */ void *unused_SetOptimizedModelFilePath;
    /* 12 */ void *unused_CloneSessionOptions;
    /* 13 */ OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *options, ExecutionMode execution_mode);
    /* 14 */ void *unused_EnableProfiling;
    /* 15 */ void *unused_DisableProfiling;
    /* 16 */ OrtStatus *(*EnableMemPattern)(OrtSessionOptions *options);
    /* 17 */ OrtStatus *(*DisableMemPattern)(OrtSessionOptions *options);
    /* 18 */ OrtStatus *(*EnableCpuMemArena)(OrtSessionOptions *options);
    /* 19 */ OrtStatus *(*DisableCpuMemArena)(OrtSessionOptions *options);
    /* 20 */ void *unused_SetSessionLogId;
    /* 21 */ void *unused_SetSessionLogVerbosityLevel;
    /* 22 */ void *unused_SetSessionLogSeverityLevel;
    /* 23 */ OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *options,
                                                            GraphOptimizationLevel graph_optimization_level);
    /// 0 lets the library choose (one thread per core).
    /* 24 */ OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *options, int intra_op_num_threads);
    /* 25 */ OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *options, int inter_op_num_threads);

    /* 26 */ void *unused_CreateCustomOpDomain;
    /* 27 */ void *unused_CustomOpDomain_Add;
    /* 28 */ void *unused_AddCustomOpDomain;
    /* 29 */ void *unused_RegisterCustomOpsLibrary;

    /* 30 */ OrtStatus *(*SessionGetInputCount)(const OrtSession *session, size_t *out);
    /* 31 */ OrtStatus *(*SessionGetOutputCount)(const OrtSession *session, size_t *out);
    /* 32 */ void *unused_SessionGetOverridableInitializerCount;
    /// type_info: release with ReleaseTypeInfo.
    /* 33 */ OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *session, size_t index,
                                                   OrtTypeInfo **type_info);
    /* 34 */ OrtStatus *(*SessionGetOutputTypeInfo)(const OrtSession *session, size_t index,
                                                    OrtTypeInfo **type_info);
    /* 35 */ void *unused_SessionGetOverridableInitializerTypeInfo;
    /// The name is allocated with `allocator`: free it with AllocatorFree(allocator, name).
    /* 36 */ OrtStatus *(*SessionGetInputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                               char **value);
    /* 37 */ OrtStatus *(*SessionGetOutputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                                char **value);
    /* 38 */ void *unused_SessionGetOverridableInitializerName;

    /* 39 */ void *unused_CreateRunOptions;
    /* 40 */ void *unused_RunOptionsSetRunLogVerbosityLevel;
    /* 41 */ void *unused_RunOptionsSetRunLogSeverityLevel;
    /* 42 */ void *unused_RunOptionsSetRunTag;
    /* 43 */ void *unused_RunOptionsGetRunLogVerbosityLevel;
    /* 44 */ void *unused_RunOptionsGetRunLogSeverityLevel;
    /* 45 */ void *unused_RunOptionsGetRunTag;
    /* 46 */ void *unused_RunOptionsSetTerminate;
    /* 47 */ void *unused_RunOptionsUnsetTerminate;

    /* 48 */ void *unused_CreateTensorAsOrtValue;
    /// A tensor over the caller's buffer (not copied, not freed by ReleaseValue: it must outlive the value).
    /// p_data_len is in bytes; shape holds shape_len dimensions, none negative.
    /* 49 */ OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *p_data,
                                                          size_t p_data_len, const int64_t *shape,
                                                          size_t shape_len, ONNXTensorElementDataType type,
                                                          OrtValue **out);
    /// *out is 1 when the value is a tensor, else 0.
    /* 50 */ OrtStatus *(*IsTensor)(const OrtValue *value, int *out);
    /// The tensor's own storage, valid until the value is released.
    /* 51 */ OrtStatus *(*GetTensorMutableData)(OrtValue *value, void **out);
    /* 52 */ void *unused_FillStringTensor;
    /* 53 */ void *unused_GetStringTensorDataLength;
    /* 54 */ void *unused_GetStringTensorContent;

    /// *out is owned by type_info (do not release it) and NULL when the type is not a tensor.
    /* 55 */ OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *type_info,
                                                    const OrtTensorTypeAndShapeInfo **out);
    /* 56 */ void *unused_GetOnnxTypeFromTypeInfo;
    /* 57 */ void *unused_CreateTensorTypeAndShapeInfo;
    /* 58 */ void *unused_SetTensorElementType;
    /* 59 */ void *unused_SetDimensions;
    /* 60 */ OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *info,
                                                ONNXTensorElementDataType *out);
    /* 61 */ OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    /// A dynamic (symbolic) dimension reads as -1.
    /* 62 */ OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *info, int64_t *dim_values,
                                         size_t dim_values_length);
    /* 63 */ void *unused_GetSymbolicDimensions;
    /// The product of the dimensions (1 for none). For a shape with a dynamic dimension it fails (1.23.2: ORT_FAIL,
    /// "Integer overflow"; older documentation says it returns -1): use it on values, not on a model's declarations.
    /* 64 */ OrtStatus *(*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    /// out: release with ReleaseTensorTypeAndShapeInfo.
    /* 65 */ OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *value, OrtTensorTypeAndShapeInfo **out);
    /* 66 */ void *unused_GetTypeInfo;
    /* 67 */ void *unused_GetValueType;

    /* 68 */ void *unused_CreateMemoryInfo;
    /// Describes CPU memory for CreateTensorWithDataAsOrtValue (e.g. OrtArenaAllocator, OrtMemTypeDefault).
    /* 69 */ OrtStatus *(*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo **out);
    /* 70 */ void *unused_CompareMemoryInfo;
    /* 71 */ void *unused_MemoryInfoGetName;
    /* 72 */ void *unused_MemoryInfoGetId;
    /* 73 */ void *unused_MemoryInfoGetMemType;
    /* 74 */ void *unused_MemoryInfoGetType;

    /* 75 */ void *unused_AllocatorAlloc;
    /* 76 */ OrtStatus *(*AllocatorFree)(OrtAllocator *allocator, void *p);
    /* 77 */ void *unused_AllocatorGetInfo;
    /// The library's default CPU allocator: one shared object, never released.
    /* 78 */ OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);

    /* 79 */ void *unused_AddFreeDimensionOverride;
    /* 80 */ void *unused_GetValue;
    /* 81 */ void *unused_GetValueCount;
    /* 82 */ void *unused_CreateValue;
    /* 83 */ void *unused_CreateOpaqueValue;
    /* 84 */ void *unused_GetOpaqueValue;
    /* 85 */ void *unused_KernelInfoGetAttribute_float;
    /* 86 */ void *unused_KernelInfoGetAttribute_int64;
    /* 87 */ void *unused_KernelInfoGetAttribute_string;
    /* 88 */ void *unused_KernelContext_GetInputCount;
    /* 89 */ void *unused_KernelContext_GetOutputCount;
    /* 90 */ void *unused_KernelContext_GetInput;
    /* 91 */ void *unused_KernelContext_GetOutput;

    /* 92 */ void (*ReleaseEnv)(OrtEnv *input);
    /* 93 */ void (*ReleaseStatus)(OrtStatus *input);
    /* 94 */ void (*ReleaseMemoryInfo)(OrtMemoryInfo *input);
    /// Not from a library destructor or while another thread runs the session.
    /* 95 */ void (*ReleaseSession)(OrtSession *input);
    /* 96 */ void (*ReleaseValue)(OrtValue *input);
    /* 97 */ void *unused_ReleaseRunOptions;
    /* 98 */ void (*ReleaseTypeInfo)(OrtTypeInfo *input);
    /* 99 */ void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *input);
    /* 100 */ void (*ReleaseSessionOptions)(OrtSessionOptions *input);
    /* 101 */ void *unused_ReleaseCustomOpDomain;
    // Version 2 (ONNX Runtime 1.2)
    /* 102 */ void *unused_GetDenotationFromTypeInfo;
    /* 103 */ void *unused_CastTypeInfoToMapTypeInfo;
    /* 104 */ void *unused_CastTypeInfoToSequenceTypeInfo;
    /* 105 */ void *unused_GetMapKeyType;
    /* 106 */ void *unused_GetMapValueType;
    /* 107 */ void *unused_GetSequenceElementType;
    /* 108 */ void *unused_ReleaseMapTypeInfo;
    /* 109 */ void *unused_ReleaseSequenceTypeInfo;
    /* 110 */ void *unused_SessionEndProfiling;
    /* 111 */ void *unused_SessionGetModelMetadata;
    /* 112 */ void *unused_ModelMetadataGetProducerName;
    /* 113 */ void *unused_ModelMetadataGetGraphName;
    /* 114 */ void *unused_ModelMetadataGetDomain;
    /* 115 */ void *unused_ModelMetadataGetDescription;
    /* 116 */ void *unused_ModelMetadataLookupCustomMetadataMap;
    /* 117 */ void *unused_ModelMetadataGetVersion;
    /* 118 */ void *unused_ReleaseModelMetadata;
    // Version 3
    /* 119 */ void *unused_CreateEnvWithGlobalThreadPools;
    /* 120 */ void *unused_DisablePerSessionThreads;
    /* 121 */ void *unused_CreateThreadingOptions;
    /* 122 */ void *unused_ReleaseThreadingOptions;
    /* 123 */ void *unused_ModelMetadataGetCustomMetadataMapKeys;
    /* 124 */ void *unused_AddFreeDimensionOverrideByName;
    // Version 4
    /* 125 */ void *unused_GetAvailableProviders;
    /* 126 */ void *unused_ReleaseAvailableProviders;
    // Version 5 (ONNX Runtime 1.5)
    /* 127 */ void *unused_GetStringTensorElementLength;
    /* 128 */ void *unused_GetStringTensorElement;
    /* 129 */ void *unused_FillStringTensorElement;
    /// Sets a session configuration key (e.g. "session.x64quantprecision" = "1"); copied, so the strings may be
    /// freed after the call. Unknown keys are accepted and ignored by the runtime.
    /* 130 */ OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *options, const char *config_key,
                                                  const char *config_value);
    // Later members are not declared.
} OrtApi;

/// What OrtGetApiBase returns.
typedef struct OrtApiBase {
    /// The table for `version`, or NULL when the library is older than that version (it then also prints a
    /// line to stderr).
    const OrtApi *(*GetApi)(uint32_t version);
    /// The library's release, e.g. "1.23.2".
    const char *(*GetVersionString)(void);
} OrtApiBase;

// ---------------------------------------------------------------------------------------------------------
// The loader.

/// Opens the ONNX Runtime shared library at `library_path` (dlopen, RTLD_NOW | RTLD_LOCAL; a name without a
/// slash is searched for the usual way, e.g. LD_LIBRARY_PATH), finds `OrtGetApiBase` and asks for C API version
/// `api_version` (pass VS_ORT_API_VERSION).
///
/// On success returns the table and writes the library's version string (e.g. "1.23.2") into version_out. The
/// library then stays loaded for the life of the process (it is never closed; loading the same path again is
/// cheap and returns the same table).
///
/// On failure returns NULL and writes a NUL-terminated, one-line reason into `error`: the file could not be
/// loaded (with the system loader's own message, which names the path), it is not an ONNX Runtime library (no
/// OrtGetApiBase; again with the loader's message), or the library is too old for `api_version` (naming its
/// version; the library also prints a line to stderr). The reason names the path only where the system loader's
/// message does: the caller names it. When the library answered, version_out holds its version on failure too;
/// otherwise it is set to "". A file that is not ONNX Runtime is closed again; an ONNX Runtime that is too old
/// stays loaded (it does not unload cleanly).
///
/// `error` and `version_out` may be NULL (with capacity 0); messages are truncated to fit. Thread-safe.
const OrtApi *vs_ort_load(const char *library_path, uint32_t api_version, char *error, size_t error_capacity,
                          char *version_out, size_t version_capacity);

#ifdef __cplusplus
}
#endif

#endif  // VSEARCH_CONNXRUNTIME_H

// The host grid's stand-in for CUDA's <cuda_runtime_api.h>: the types, constants and runtime calls
// the CUDA backend (kernels/cuda/) uses, implemented on the CPU by tests/cuda_host/host_grid.cpp.
// Only on the include path of the host-run build of kernels/cuda/ (tests/cuda_host/CMakeLists.txt);
// the design is in tests/cuda_host/host_grid.h. Error codes carry CUDA 13's numbers.
#pragma once

#include <cstddef>

// CUDA's error codes: name and number.
#define OFL_HOST_GRID_CUDA_ERRORS(X)              \
  X(cudaSuccess, 0)                               \
  X(cudaErrorInvalidValue, 1)                     \
  X(cudaErrorMemoryAllocation, 2)                 \
  X(cudaErrorInitializationError, 3)              \
  X(cudaErrorCudartUnloading, 4)                  \
  X(cudaErrorProfilerDisabled, 5)                 \
  X(cudaErrorProfilerNotInitialized, 6)           \
  X(cudaErrorProfilerAlreadyStarted, 7)           \
  X(cudaErrorProfilerAlreadyStopped, 8)           \
  X(cudaErrorInvalidConfiguration, 9)             \
  X(cudaErrorInvalidPitchValue, 12)               \
  X(cudaErrorInvalidSymbol, 13)                   \
  X(cudaErrorInvalidHostPointer, 16)              \
  X(cudaErrorInvalidDevicePointer, 17)            \
  X(cudaErrorInvalidTexture, 18)                  \
  X(cudaErrorInvalidTextureBinding, 19)           \
  X(cudaErrorInvalidChannelDescriptor, 20)        \
  X(cudaErrorInvalidMemcpyDirection, 21)          \
  X(cudaErrorAddressOfConstant, 22)               \
  X(cudaErrorTextureFetchFailed, 23)              \
  X(cudaErrorTextureNotBound, 24)                 \
  X(cudaErrorSynchronizationError, 25)            \
  X(cudaErrorInvalidFilterSetting, 26)            \
  X(cudaErrorInvalidNormSetting, 27)              \
  X(cudaErrorMixedDeviceExecution, 28)            \
  X(cudaErrorNotYetImplemented, 31)               \
  X(cudaErrorMemoryValueTooLarge, 32)             \
  X(cudaErrorStubLibrary, 34)                     \
  X(cudaErrorInsufficientDriver, 35)              \
  X(cudaErrorCallRequiresNewerDriver, 36)         \
  X(cudaErrorInvalidSurface, 37)                  \
  X(cudaErrorDuplicateVariableName, 43)           \
  X(cudaErrorDuplicateTextureName, 44)            \
  X(cudaErrorDuplicateSurfaceName, 45)            \
  X(cudaErrorDevicesUnavailable, 46)              \
  X(cudaErrorIncompatibleDriverContext, 49)       \
  X(cudaErrorMissingConfiguration, 52)            \
  X(cudaErrorPriorLaunchFailure, 53)              \
  X(cudaErrorLaunchMaxDepthExceeded, 65)          \
  X(cudaErrorLaunchFileScopedTex, 66)             \
  X(cudaErrorLaunchFileScopedSurf, 67)            \
  X(cudaErrorSyncDepthExceeded, 68)               \
  X(cudaErrorLaunchPendingCountExceeded, 69)      \
  X(cudaErrorInvalidDeviceFunction, 98)           \
  X(cudaErrorNoDevice, 100)                       \
  X(cudaErrorInvalidDevice, 101)                  \
  X(cudaErrorDeviceNotLicensed, 102)              \
  X(cudaErrorSoftwareValidityNotEstablished, 103) \
  X(cudaErrorStartupFailure, 127)                 \
  X(cudaErrorInvalidKernelImage, 200)             \
  X(cudaErrorDeviceUninitialized, 201)            \
  X(cudaErrorMapBufferObjectFailed, 205)          \
  X(cudaErrorUnmapBufferObjectFailed, 206)        \
  X(cudaErrorArrayIsMapped, 207)                  \
  X(cudaErrorAlreadyMapped, 208)                  \
  X(cudaErrorNoKernelImageForDevice, 209)         \
  X(cudaErrorAlreadyAcquired, 210)                \
  X(cudaErrorNotMapped, 211)                      \
  X(cudaErrorNotMappedAsArray, 212)               \
  X(cudaErrorNotMappedAsPointer, 213)             \
  X(cudaErrorECCUncorrectable, 214)               \
  X(cudaErrorUnsupportedLimit, 215)               \
  X(cudaErrorDeviceAlreadyInUse, 216)             \
  X(cudaErrorPeerAccessUnsupported, 217)          \
  X(cudaErrorInvalidPtx, 218)                     \
  X(cudaErrorInvalidGraphicsContext, 219)         \
  X(cudaErrorNvlinkUncorrectable, 220)            \
  X(cudaErrorJitCompilerNotFound, 221)            \
  X(cudaErrorUnsupportedPtxVersion, 222)          \
  X(cudaErrorJitCompilationDisabled, 223)         \
  X(cudaErrorUnsupportedExecAffinity, 224)        \
  X(cudaErrorUnsupportedDevSideSync, 225)         \
  X(cudaErrorContained, 226)                      \
  X(cudaErrorInvalidSource, 300)                  \
  X(cudaErrorFileNotFound, 301)                   \
  X(cudaErrorSharedObjectSymbolNotFound, 302)     \
  X(cudaErrorSharedObjectInitFailed, 303)         \
  X(cudaErrorOperatingSystem, 304)                \
  X(cudaErrorInvalidResourceHandle, 400)          \
  X(cudaErrorIllegalState, 401)                   \
  X(cudaErrorLossyQuery, 402)                     \
  X(cudaErrorSymbolNotFound, 500)                 \
  X(cudaErrorNotReady, 600)                       \
  X(cudaErrorIllegalAddress, 700)                 \
  X(cudaErrorLaunchOutOfResources, 701)           \
  X(cudaErrorLaunchTimeout, 702)                  \
  X(cudaErrorLaunchIncompatibleTexturing, 703)    \
  X(cudaErrorPeerAccessAlreadyEnabled, 704)       \
  X(cudaErrorPeerAccessNotEnabled, 705)           \
  X(cudaErrorSetOnActiveProcess, 708)             \
  X(cudaErrorContextIsDestroyed, 709)             \
  X(cudaErrorAssert, 710)                         \
  X(cudaErrorTooManyPeers, 711)                   \
  X(cudaErrorHostMemoryAlreadyRegistered, 712)    \
  X(cudaErrorHostMemoryNotRegistered, 713)        \
  X(cudaErrorHardwareStackError, 714)             \
  X(cudaErrorIllegalInstruction, 715)             \
  X(cudaErrorMisalignedAddress, 716)              \
  X(cudaErrorInvalidAddressSpace, 717)            \
  X(cudaErrorInvalidPc, 718)                      \
  X(cudaErrorLaunchFailure, 719)                  \
  X(cudaErrorCooperativeLaunchTooLarge, 720)      \
  X(cudaErrorTensorMemoryLeak, 721)               \
  X(cudaErrorNotPermitted, 800)                   \
  X(cudaErrorNotSupported, 801)                   \
  X(cudaErrorSystemNotReady, 802)                 \
  X(cudaErrorSystemDriverMismatch, 803)           \
  X(cudaErrorCompatNotSupportedOnDevice, 804)     \
  X(cudaErrorMpsConnectionFailed, 805)            \
  X(cudaErrorMpsRpcFailure, 806)                  \
  X(cudaErrorMpsServerNotReady, 807)              \
  X(cudaErrorMpsMaxClientsReached, 808)           \
  X(cudaErrorMpsMaxConnectionsReached, 809)       \
  X(cudaErrorMpsClientTerminated, 810)            \
  X(cudaErrorCdpNotSupported, 811)                \
  X(cudaErrorCdpVersionMismatch, 812)             \
  X(cudaErrorStreamCaptureUnsupported, 900)       \
  X(cudaErrorStreamCaptureInvalidated, 901)       \
  X(cudaErrorStreamCaptureMerge, 902)             \
  X(cudaErrorStreamCaptureUnmatched, 903)         \
  X(cudaErrorStreamCaptureUnjoined, 904)          \
  X(cudaErrorStreamCaptureIsolation, 905)         \
  X(cudaErrorStreamCaptureImplicit, 906)          \
  X(cudaErrorCapturedEvent, 907)                  \
  X(cudaErrorStreamCaptureWrongThread, 908)       \
  X(cudaErrorTimeout, 909)                        \
  X(cudaErrorGraphExecUpdateFailure, 910)         \
  X(cudaErrorExternalDevice, 911)                 \
  X(cudaErrorInvalidClusterSize, 912)             \
  X(cudaErrorFunctionNotLoaded, 913)              \
  X(cudaErrorInvalidResourceType, 914)            \
  X(cudaErrorInvalidResourceConfiguration, 915)   \
  X(cudaErrorUnknown, 999)                        \
  /* end */

enum cudaError {
#define OFL_HOST_GRID_ENUM(name, value) name = value,
  OFL_HOST_GRID_CUDA_ERRORS(OFL_HOST_GRID_ENUM)
#undef OFL_HOST_GRID_ENUM
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMultiProcessorCount = 16
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};

struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

// Streams and events are the host grid's own records (host_grid.cpp).
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device);
cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags);
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream);

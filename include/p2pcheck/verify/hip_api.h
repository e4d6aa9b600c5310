// Every HIP runtime and hipFile entry point `p2pcheck verify` calls, declared once, here. They are
// resolved with dlopen/dlsym at run time (src/verify_hipfile.cc): p2pcheck must build and run on
// machines without ROCm, and Debian 12's HIP 5.2 (libamdhip64.so.5) has neither hipFile nor
// hipAmdFileRead/hipAmdFileWrite nor even hipGetProcAddress.
//
// Sources, not invented:
//  - HIP runtime API (hip/hip_runtime_api.h; https://rocm.docs.amd.com/projects/HIP/en/latest/
//    reference/hip_runtime_api_reference.html): hipGetDeviceCount, hipDeviceGetPCIBusId, hipSetDevice,
//    hipMalloc, hipFree, hipMemcpy, hipGetErrorString, hipRuntimeGetVersion, hipGetProcAddress
//    (ROCm 6.1+; "hipVersion" is what hipRuntimeGetVersion returns, flags 0 =
//    HIP_GET_PROC_ADDRESS_DEFAULT, as hipFile's own src/amd_detail/hip.cpp calls it).
//  - hipAmdFileRead / hipAmdFileWrite: HIP's hip/amd_detail/hip_storage.h (rocm-systems
//    projects/clr/hipamd), found through hipGetProcAddress exactly as hipFile does (ais-check probes
//    the same two names). p2pcheck only checks that they resolve: hipFile calls them.
//  - hipFile 0.2 (include/hipfile.h; https://rocm.docs.amd.com/projects/hipFile/en/latest/reference/
//    api-file-and-buffer.html and .../api-synchronous-io.html): hipFileDriverOpen/Close,
//    hipFileHandleRegister/Deregister, hipFileBufRegister/Deregister, hipFileRead, hipFileWrite,
//    hipFileGetOpErrorString, hipFileGetVersion; library target "hipfile" (libhipfile.so).
//  - HIPFILE_ALLOW_COMPAT_MODE / HIPFILE_FORCE_COMPAT_MODE: hipFile src/amd_detail/environment.h
//    ("If disabled, I/O operations that cannot be completed by the AIS path will be rejected").
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace p2pcheck::hip {

// hipError_t is a C enum: an int on every ABI ROCm supports.
using Error = int;
inline constexpr Error kSuccess = 0;
inline constexpr Error kErrorInsufficientDriver = 35;
inline constexpr Error kErrorNoDevice = 100;  // "Call to hipGetDeviceCount returned 0 devices"
inline constexpr Error kErrorInvalidDevice = 101;

// hipMemcpyKind
inline constexpr int kMemcpyHostToDevice = 1;
inline constexpr int kMemcpyDeviceToHost = 2;

// hipDriverProcAddressQueryResult
inline constexpr int kProcAddressSuccess = 0;

// hipAmdFileHandle_t: a union of a pointer, an fd and 8 bytes of padding, passed by value.
union AmdFileHandle {
  void* handle;
  int fd;
  std::uint8_t pad[8];
};

using GetDeviceCountFn = Error (*)(int* count);
using DeviceGetPCIBusIdFn = Error (*)(char* pci_bus_id, int len, int device);  // "0000:43:00.0"
using SetDeviceFn = Error (*)(int device);
using MallocFn = Error (*)(void** ptr, std::size_t size);
using FreeFn = Error (*)(void* ptr);
using MemcpyFn = Error (*)(void* dst, const void* src, std::size_t size, int kind);
using GetErrorStringFn = const char* (*)(Error error);
using RuntimeGetVersionFn = Error (*)(int* runtime_version);
using GetProcAddressFn = Error (*)(const char* symbol, void** pfn, int hip_version, std::uint64_t flags,
                                   int* symbol_status);
using AmdFileReadFn = Error (*)(AmdFileHandle handle, void* device_ptr, std::uint64_t size, std::int64_t file_offset,
                                std::uint64_t* size_copied, std::int32_t* status);
using AmdFileWriteFn = AmdFileReadFn;

// The HIP runtime entry points; get_proc_address is null on runtimes older than ROCm 6.1.
struct RuntimeApi {
  GetDeviceCountFn get_device_count = nullptr;
  DeviceGetPCIBusIdFn device_get_pci_bus_id = nullptr;
  SetDeviceFn set_device = nullptr;
  MallocFn malloc = nullptr;
  FreeFn free = nullptr;
  MemcpyFn memcpy = nullptr;
  GetErrorStringFn get_error_string = nullptr;
  RuntimeGetVersionFn runtime_get_version = nullptr;
  GetProcAddressFn get_proc_address = nullptr;
};

}  // namespace p2pcheck::hip

namespace p2pcheck::hipfile {

// hipFileError_t: {hipFileOpError_t err; hipError_t hip_drv_err;}, returned by value (8 bytes).
struct Error {
  int err;
  int hip_drv_err;
};
inline constexpr int kSuccess = 0;
inline constexpr int kBaseErr = 5000;  // HIPFILE_BASE_ERR
inline constexpr int kDriverNotInitialized = 5001;
inline constexpr int kIONotSupported = 5008;  // "hipFile is not supported on the selected file"
inline constexpr int kDeviceNotSupported = 5009;
inline constexpr int kHipDriverError = 5011;  // inspect hip_drv_err

inline constexpr int kHandleTypeOpaqueFD = 1;  // hipFileHandleTypeOpaqueFD

// hipFileDescr_t: {hipFileFileHandleType_t type; union {int fd; void* hFile;} handle; const hipFileFSOps_t* fs_ops;}
struct Descr {
  int type;
  union {
    int fd;
    void* hFile;
  } handle;
  const void* fs_ops;
};
using Handle = void*;  // hipFileHandle_t

using DriverOpenFn = Error (*)();
using DriverCloseFn = Error (*)();
using HandleRegisterFn = Error (*)(Handle* fh, Descr* descr);
using HandleDeregisterFn = void (*)(Handle fh);
using BufRegisterFn = Error (*)(const void* buffer_base, std::size_t length, int flags);
using BufDeregisterFn = Error (*)(const void* buffer_base);
// >= 0 bytes moved; -1 a system error (errno set); otherwise -hipFileOpError_t.
using ReadFn = ssize_t (*)(Handle fh, void* buffer_base, std::size_t size, off_t file_offset, off_t buffer_offset);
using WriteFn = ssize_t (*)(Handle fh, const void* buffer_base, std::size_t size, off_t file_offset,
                            off_t buffer_offset);
using GetOpErrorStringFn = const char* (*)(int status);
using GetVersionFn = Error (*)(unsigned* major, unsigned* minor, unsigned* patch);

struct Api {
  DriverOpenFn driver_open = nullptr;
  DriverCloseFn driver_close = nullptr;
  HandleRegisterFn handle_register = nullptr;
  HandleDeregisterFn handle_deregister = nullptr;
  BufRegisterFn buf_register = nullptr;
  BufDeregisterFn buf_deregister = nullptr;
  ReadFn read = nullptr;
  WriteFn write = nullptr;
  GetOpErrorStringFn get_op_error_string = nullptr;
  GetVersionFn get_version = nullptr;  // optional
};

inline constexpr const char* kAllowCompatModeEnv = "HIPFILE_ALLOW_COMPAT_MODE";
inline constexpr const char* kForceCompatModeEnv = "HIPFILE_FORCE_COMPAT_MODE";

}  // namespace p2pcheck::hipfile

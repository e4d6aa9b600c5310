#include <gtest/gtest.h>

#include "file_map.h"
#include "p2pcheck/checks/gpu.h"
#include "test_expect.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::expect_evidence_on_non_pass;
using testing::FakeRoot;
using testing::FileMap;

constexpr std::uint64_t GiB = 1ull << 30, MiB = 1ull << 20;

const Finding* find(const std::vector<Finding>& fs, const std::string& id, const std::string& subject = "") {
  for (const auto& f : fs)
    if (f.id == id && f.subject == subject) return &f;
  return nullptr;
}
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool has_evidence(const Finding& f, const std::string& file, const std::string& value_part = "") {
  for (const auto& e : f.evidence)
    if (e.file == file && e.value.find(value_part) != std::string::npos) return true;
  return false;
}
Bar mem_bar(int index, std::uint64_t size) { return Bar{index, 0x10000000000ull, size, 0x0014220c}; }

// A machine with one AMD dGPU at 0000:03:00.0 behind a root port, a healthy ROCm stack, and a CPU
// KFD node 0; tests then break one thing each.
class GpuStack : public ::testing::Test {
 protected:
  GpuStack() {
    gpu_.bdf = *Bdf::parse("0000:03:00.0");
    gpu_.vendor = 0x1002;
    gpu_.device = 0x74a1;
    gpu_.class_code = 0x120000;
    gpu_.driver = "amdgpu";
    gpu_.sysfs_path = "/sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0";
    gpu_.host_bridge = "0000:00";
    gpu_.parent = Bdf::parse("0000:00:01.0");
    gpu_.port_type = PortType::kEndpoint;
    gpu_.bars = {mem_bar(0, 256 * GiB), mem_bar(2, 2 * MiB), Bar{5, 0xf0000000, 512 * 1024, 0x40200}};
    gpu_.rebar_presence = Presence::kAbsent;
    gpu_.sriov_presence = Presence::kAbsent;

    machine_.modules_known = true;
    machine_.modules["amdgpu"] = "Live";
    machine_.cpu.evidence_file = "/proc/cpuinfo";
    dir_.write("sys/module/amdgpu/version", "6.16.13-2400000.24.04\n");
    dir_.write("proc/kallsyms",
               "0000000000000000 T kfd_ais_init\t[amdgpu]\n0000000000000000 t kfd_ais_rw_file\t[amdgpu]\n");
    dir_.write("sys/class/dmi/id/sys_vendor", "Supermicro\n");
    dir_.write("sys/class/dmi/id/product_name", "AS -8125GS-TNMR2\n");
    kfd_node(0, "cpu_cores_count 96\nsimd_count 0\nmem_banks_count 1\n");
    dir_.write("sys/class/kfd/kfd/topology/nodes/0/mem_banks/0/properties",
               "heap_type 0\nsize_in_bytes 1649267441664\n");
    kfd_node(1,
             "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ncapability 746586304\n"
             "domain 0\nlocation_id 768\n");  // 768 = bus 3 << 8
    vram(1, 192 * GiB, 1);
    dir_.write("opt/rocm-7.0.0/lib/libamdhip64.so.7.0.60400", "");
    dir_.link("opt/rocm-7.0.0/lib/libamdhip64.so", "libamdhip64.so.7.0.60400");
    dir_.link("opt/rocm", "/opt/rocm-7.0.0");
  }
  void kfd_node(int id, const std::string& props) {
    dir_.write("sys/class/kfd/kfd/topology/nodes/" + std::to_string(id) + "/properties", props);
  }
  void vram(int id, std::uint64_t size, int heap) {
    dir_.write("sys/class/kfd/kfd/topology/nodes/" + std::to_string(id) + "/mem_banks/0/properties",
               "heap_type " + std::to_string(heap) + "\nsize_in_bytes " + std::to_string(size) + "\nflags 0\n");
  }
  std::vector<Finding> run() {
    topo_.functions.clear();
    topo_.functions[gpu_.bdf] = gpu_;
    for (const auto& fn : extra_) topo_.functions[fn.bdf] = fn;
    inv_.gpus.clear();
    for (const auto& [bdf, fn] : topo_.functions)
      if (fn.vendor == 0x1002 || fn.vendor == 0x10de) inv_.gpus.push_back(bdf);
    root_ = dir_.root();
    source_ = root_.source();
    // DMI is read once with the machine's identity (read_machine); the GPU checks cite those reads.
    machine_.identity = read_identity(*source_);
    return check_gpu(read_gpu(*source_, machine_, topo_, inv_), machine_, topo_, inv_);
  }
  std::string gpu() const { return gpu_.bdf.str(); }

  FileMap dir_;
  FakeRoot root_;
  Function gpu_;
  std::vector<Function> extra_;
  Machine machine_;
  Topology topo_;
  Inventory inv_;
  std::unique_ptr<Source> source_;
};

TEST(GpuStackParse, DkmsBuildNumber) {
  EXPECT_EQ(amdgpu_dkms_build("6.16.13-2278356.24.04"), 2278356u);
  EXPECT_EQ(amdgpu_dkms_build("6.12.12-2187269.24.04"), 2187269u);
  EXPECT_FALSE(amdgpu_dkms_build("6.8.0"));
  EXPECT_FALSE(amdgpu_dkms_build(""));
  EXPECT_FALSE(amdgpu_dkms_build("1.0-beta"));
}

TEST(GpuStackParse, GfxNames) {
  EXPECT_EQ(gfx_name(110003), "gfx1103");
  EXPECT_EQ(gfx_name(90012), "gfx90c");
  EXPECT_EQ(gfx_name(90402), "gfx942");
  EXPECT_EQ(gfx_name(100300), "gfx1030");
}

TEST(GpuStackParse, KfdNodesMapToPciFunctions) {
  FakeRoot dir;
  dir.write("sys/class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 64\nsimd_count 0\n");
  dir.write("sys/class/kfd/kfd/topology/nodes/1/properties",
            "simd_count 304\ndomain 2\nlocation_id 49409\nunique_id 18446744073709551615\n");  // c1:00.1
  dir.write("sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties", "heap_type 2\nsize_in_bytes 1024\n");
  dir.write("sys/class/kfd/kfd/topology/nodes/1/io_links/0/properties", "type 11\nnode_from 1\nnode_to 0\n");
  auto src = dir.source();
  KfdTopology kfd = read_kfd(*src);
  ASSERT_TRUE(kfd.present);
  ASSERT_EQ(kfd.nodes.size(), 2u);
  EXPECT_FALSE(kfd.nodes[0].is_gpu());
  const KfdNode* n = kfd.gpu_node(*Bdf::parse("0002:c1:00.1"));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->vram_bytes, 1024u);
  EXPECT_EQ(n->vram_heap_type, 2);
  EXPECT_TRUE(n->xgmi_to_cpu);
  EXPECT_EQ(n->prop("unique_id"), 18446744073709551615ull);
}

TEST_F(GpuStack, HealthyDgpuPasses) {
  auto fs = run();
  for (const char* id : {"gpu.virtualization", "gpu.amdgpu_module", "gpu.kfd", "gpu.ais"}) {
    ASSERT_TRUE(find(fs, id)) << id;
    EXPECT_EQ(find(fs, id)->level, Level::kPass) << id << ": " << find(fs, id)->message;
  }
  EXPECT_TRUE(contains(find(fs, "gpu.amdgpu_module")->message, "build 2400000"));
  EXPECT_TRUE(has_evidence(*find(fs, "gpu.ais"), "/proc/kallsyms", "kfd_ais_rw_file"));
  for (const char* id : {"gpu.driver", "gpu.large_bar", "gpu.ais_initialized"}) {
    ASSERT_TRUE(find(fs, id, gpu())) << id;
    EXPECT_EQ(find(fs, id, gpu())->level, Level::kPass) << id << ": " << find(fs, id, gpu())->message;
  }
  EXPECT_TRUE(has_evidence(*find(fs, "gpu.large_bar", gpu()),
                           "/sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties", "size_in_bytes"));
  EXPECT_FALSE(find(fs, "gpu.apu", gpu()));
  EXPECT_FALSE(find(fs, "gpu.sriov_vf", gpu()));
  const Finding* hip = find(fs, "gpu.hip_runtime");
  ASSERT_TRUE(hip);
  EXPECT_EQ(hip->level, Level::kInfo);
  EXPECT_TRUE(contains(hip->message, "/opt/rocm/lib/libamdhip64.so"));
  EXPECT_TRUE(contains(hip->message, "verify time"));
  // /opt/rocm links to /opt/rocm-7.0.0: listed once.
  EXPECT_FALSE(contains(hip->message, "/opt/rocm-7.0.0/lib"));
  const Finding* lib = find(fs, "gpu.hipfile_library");
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->level, Level::kInfo);  // absent, but never a failure
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, AisCapabilityBitIsReadOnlyOnNewDkmsBuilds) {
  kfd_node(1, "simd_count 1216\ncapability 0\ndomain 0\nlocation_id 768\n");
  auto fs = run();
  const Finding* f = find(fs, "gpu.ais_initialized", gpu());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(has_evidence(*f, "/sys/class/kfd/kfd/topology/nodes/1/properties", "capability 0x0"));

  // Build 2278356 is older than 2327936: bit 0x40 means nothing there, so no per-GPU finding.
  dir_.write("sys/module/amdgpu/version", "6.16.13-2278356.24.04\n");
  fs = run();
  EXPECT_FALSE(find(fs, "gpu.ais_initialized", gpu()));
  EXPECT_TRUE(contains(find(fs, "gpu.ais")->message, "HSA_CAP_VA_LIMIT"));

  // Upstream amdgpu: no version file; the bit (set here) is HSA_CAP_VA_LIMIT, never AIS.
  dir_.remove("sys/module/amdgpu/version");
  kfd_node(1, "simd_count 1216\ncapability 64\ndomain 0\nlocation_id 768\n");
  fs = run();
  EXPECT_FALSE(find(fs, "gpu.ais_initialized", gpu()));
  EXPECT_TRUE(contains(find(fs, "gpu.amdgpu_module")->message, "in-tree"));
}

TEST_F(GpuStack, KallsymsDecidesAis) {
  dir_.write("proc/kallsyms", "ffffffff81000000 T _stext\nffffffffc0a00000 t kfd_ioctl\t[amdgpu]\n");
  auto fs = run();
  const Finding* f = find(fs, "gpu.ais");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->fix, "amdgpu-dkms"));
  EXPECT_TRUE(contains(f->fix, "cost"));

  dir_.remove("proc/kallsyms");
  fs = run();
  f = find(fs, "gpu.ais");
  EXPECT_EQ(f->level, Level::kUnknown);
  EXPECT_TRUE(has_evidence(*f, "/proc/kallsyms", "not present"));
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, SmallBarFails) {
  gpu_.bars[0] = mem_bar(0, 256 * MiB);
  vram(1, 16 * GiB, 2);
  auto fs = run();
  const Finding* f = find(fs, "gpu.large_bar", gpu());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->fix, "Resizable BAR"));
  EXPECT_TRUE(contains(f->fix, "Above 4G"));
  EXPECT_TRUE(has_evidence(*f, gpu_.sysfs_path + "/resource", "256 MiB"));

  // A BAR as large as VRAM but amdgpu says part of VRAM is private: still small BAR.
  gpu_.bars[0] = mem_bar(0, 16 * GiB);
  fs = run();
  EXPECT_EQ(find(fs, "gpu.large_bar", gpu())->level, Level::kFail);
  vram(1, 16 * GiB, 1);
  fs = run();
  EXPECT_EQ(find(fs, "gpu.large_bar", gpu())->level, Level::kPass);
}

TEST_F(GpuStack, LargeBarWithoutKfdUsesAmdgpuSysfsThenResizableBar) {
  dir_.remove("sys/class/kfd");
  dir_.write(gpu_.sysfs_path.substr(1) + "/mem_info_vram_total", "17163091968\n");
  dir_.write(gpu_.sysfs_path.substr(1) + "/mem_info_vis_vram_total", "268435456\n");
  gpu_.bars.clear();
  auto fs = run();
  EXPECT_EQ(find(fs, "gpu.kfd")->level, Level::kFail);  // KFD absent while amdgpu is loaded
  const Finding* f = find(fs, "gpu.large_bar", gpu());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(has_evidence(*f, gpu_.sysfs_path + "/mem_info_vis_vram_total", "268435456"));

  dir_.remove(gpu_.sysfs_path.substr(1) + "/mem_info_vram_total");
  dir_.remove(gpu_.sysfs_path.substr(1) + "/mem_info_vis_vram_total");
  gpu_.bars = {mem_bar(0, 8 * GiB)};
  gpu_.rebar_presence = Presence::kPresent;
  gpu_.rebar = {ResizableBar{0, 8 * GiB, {256 * MiB, 1 * GiB, 8 * GiB, 16 * GiB}}};
  fs = run();
  f = find(fs, "gpu.large_bar", gpu());
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "16 GiB"));
  gpu_.rebar[0].current_size = 16 * GiB;
  gpu_.bars = {mem_bar(0, 16 * GiB)};
  fs = run();
  EXPECT_EQ(find(fs, "gpu.large_bar", gpu())->level, Level::kPass);

  // Nothing to go on: config space needs root, BAR 8 GiB.
  gpu_.rebar_presence = Presence::kUnknown;
  gpu_.rebar.clear();
  gpu_.bars = {mem_bar(0, 8 * GiB)};
  gpu_.config_note = "only 64 bytes of config space readable: needs root";
  fs = run();
  f = find(fs, "gpu.large_bar", gpu());
  EXPECT_EQ(f->level, Level::kUnknown);
  EXPECT_TRUE(contains(f->message, "needs root"));
  // ... unless the BAR is the legacy 256 MiB.
  gpu_.bars = {mem_bar(0, 256 * MiB)};
  fs = run();
  EXPECT_EQ(find(fs, "gpu.large_bar", gpu())->level, Level::kFail);
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, KfdWithoutTheGpu) {
  // The GPU node maps to another function: this GPU has no KFD node.
  kfd_node(1, "simd_count 1216\ndomain 0\nlocation_id 1024\n");
  auto fs = run();
  const Finding* f = find(fs, "gpu.kfd", gpu());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_EQ(find(fs, "gpu.kfd")->level, Level::kPass);
  // Only CPU nodes: KFD sees no GPU at all.
  dir_.remove("sys/class/kfd/kfd/topology/nodes/1");
  fs = run();
  EXPECT_EQ(find(fs, "gpu.kfd")->level, Level::kFail);
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, ApusFail) {
  // By gfx target (Phoenix).
  kfd_node(1, "simd_count 24\ngfx_target_version 110003\ndomain 0\nlocation_id 768\n");
  vram(1, 512 * MiB, 1);
  auto fs = run();
  const Finding* f = find(fs, "gpu.apu", gpu());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "gfx1103"));
  EXPECT_TRUE(contains(f->message, "dGPU"));
  EXPECT_FALSE(find(fs, "gpu.large_bar", gpu()));  // moot for an APU

  // A combined CPU+GPU node.
  kfd_node(1, "cpu_cores_count 4\nsimd_count 32\ndomain 0\nlocation_id 768\n");
  fs = run();
  EXPECT_TRUE(contains(find(fs, "gpu.apu", gpu())->message, "CPU cores"));

  // Memory attached to the CPU over xGMI (MI300A-like, gfx942 like MI300X).
  kfd_node(1, "simd_count 912\ngfx_target_version 90402\ndomain 0\nlocation_id 768\n");
  dir_.write("sys/class/kfd/kfd/topology/nodes/1/io_links/0/properties", "type 11\nnode_from 1\nnode_to 0\n");
  fs = run();
  EXPECT_TRUE(contains(find(fs, "gpu.apu", gpu())->message, "xGMI"));
  dir_.remove("sys/class/kfd/kfd/topology/nodes/1/io_links");

  // No KFD at all: on the root bus with a small BAR.
  dir_.remove("sys/class/kfd");
  gpu_.parent.reset();
  gpu_.bars = {mem_bar(0, 256 * MiB)};
  fs = run();
  f = find(fs, "gpu.apu", gpu());
  ASSERT_TRUE(f);
  EXPECT_TRUE(contains(f->message, "root bus"));
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, VirtualFunctionAndWrongDriverFail) {
  Function vf = gpu_;
  vf.bdf = *Bdf::parse("0000:03:02.0");
  vf.physfn = gpu_.bdf;
  vf.sysfs_path = "/sys/devices/pci0000:00/0000:00:01.0/0000:03:02.0";
  vf.driver = "vfio-pci";
  extra_.push_back(vf);
  auto fs = run();
  const Finding* f = find(fs, "gpu.sriov_vf", "0000:03:02.0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "physical function"));
  EXPECT_TRUE(has_evidence(*f, vf.sysfs_path + "/physfn", "0000:03:00.0"));
  const Finding* d = find(fs, "gpu.driver", "0000:03:02.0");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->level, Level::kFail);
  EXPECT_TRUE(contains(d->fix, "vfio-pci/unbind"));
  EXPECT_TRUE(contains(d->fix, "virtual machine"));
  EXPECT_FALSE(find(fs, "gpu.large_bar", "0000:03:02.0"));
  EXPECT_EQ(find(fs, "gpu.driver", gpu())->level, Level::kPass);
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, AmdgpuNotLoaded) {
  machine_.modules.erase("amdgpu");
  machine_.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p2 ro nomodeset";
  dir_.remove("sys/module/amdgpu");
  gpu_.driver.clear();
  auto fs = run();
  const Finding* f = find(fs, "gpu.amdgpu_module");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kFail);
  EXPECT_TRUE(contains(f->message, "nomodeset"));
  EXPECT_TRUE(has_evidence(*f, "/proc/cmdline", "nomodeset"));
  // KFD and AIS follow from the module; they are not reported on their own.
  EXPECT_FALSE(find(fs, "gpu.kfd"));
  EXPECT_FALSE(find(fs, "gpu.ais"));
  EXPECT_EQ(find(fs, "gpu.driver", gpu())->level, Level::kFail);

  machine_.modules_known = false;
  fs = run();
  EXPECT_EQ(find(fs, "gpu.amdgpu_module")->level, Level::kUnknown);
  expect_evidence_on_non_pass(fs);
}

TEST_F(GpuStack, BuiltInAmdgpuCountsAsLoaded) {
  machine_.modules.erase("amdgpu");
  auto fs = run();
  const Finding* f = find(fs, "gpu.amdgpu_module");
  EXPECT_EQ(f->level, Level::kPass);
  EXPECT_TRUE(contains(f->message, "built into the kernel"));
}

TEST_F(GpuStack, NvidiaGpusAreInfoOrWarnByDriver) {
  Function nv;
  nv.bdf = *Bdf::parse("0000:41:00.0");
  nv.vendor = 0x10de;
  nv.device = 0x2330;
  nv.class_code = 0x030200;
  nv.driver = "nvidia";
  nv.sysfs_path = "/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0";
  extra_.push_back(nv);
  dir_.write("sys/module/nvidia/version", "570.86.15\n");
  dir_.write("proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n");
  auto fs = run();
  const Finding* f = find(fs, "gpu.nvidia", "0000:41:00.0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_TRUE(contains(f->message, "P2PDMA mode"));
  EXPECT_TRUE(contains(f->message, "570.86.15 (open kernel module)"));
  EXPECT_TRUE(has_evidence(*f, "/sys/module/nvidia/version", "570.86.15"));

  dir_.write("sys/module/nvidia/version", "535.183.01\n");
  dir_.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01\n");
  fs = run();
  f = find(fs, "gpu.nvidia", "0000:41:00.0");
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "nvidia-fs"));
  EXPECT_FALSE(f->fix.empty());
}

TEST_F(GpuStack, NoAmdGpuSkipsHipfileChecks) {
  gpu_.vendor = 0x10de;
  gpu_.driver = "nvidia";
  auto fs = run();
  const Finding* f = find(fs, "gpu.amd");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kInfo);
  EXPECT_FALSE(find(fs, "gpu.amdgpu_module"));
  EXPECT_FALSE(find(fs, "gpu.hip_runtime"));
  EXPECT_TRUE(find(fs, "gpu.nvidia", gpu()));  // NVIDIA unbound: version unknown, still INFO
}

TEST_F(GpuStack, MissingHipRuntimeWarnsNeverFails) {
  dir_.remove("opt");
  dir_.write("usr/lib/x86_64-linux-gnu/libhipfile.so.0.4.0", "");
  auto fs = run();
  const Finding* hip = find(fs, "gpu.hip_runtime");
  ASSERT_TRUE(hip);
  EXPECT_EQ(hip->level, Level::kWarn);
  EXPECT_FALSE(hip->evidence.empty());
  const Finding* lib = find(fs, "gpu.hipfile_library");
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->level, Level::kInfo);
  EXPECT_TRUE(contains(lib->message, "/usr/lib/x86_64-linux-gnu/libhipfile.so.0.4.0"));
}

TEST_F(GpuStack, VirtualizationSigns) {
  machine_.cpu.hypervisor = true;
  dir_.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
  dir_.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
  Function virtio;
  virtio.bdf = *Bdf::parse("0000:00:02.0");
  virtio.vendor = 0x1af4;
  virtio.device = 0x1041;
  extra_.push_back(virtio);
  auto fs = run();
  const Finding* f = find(fs, "gpu.virtualization");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->level, Level::kWarn);
  EXPECT_TRUE(contains(f->message, "QEMU"));
  EXPECT_TRUE(contains(f->message, "guest's virtual PCI topology and CPU"));
  EXPECT_TRUE(has_evidence(*f, "/sys/bus/pci/devices", "0000:00:02.0"));

  // Hyper-V by DMI alone.
  machine_.cpu.hypervisor = false;
  extra_.clear();
  dir_.write("sys/class/dmi/id/sys_vendor", "Microsoft Corporation\n");
  dir_.write("sys/class/dmi/id/product_name", "Virtual Machine\n");
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kWarn);

  // EC2 bare metal is not a guest.
  dir_.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
  dir_.write("sys/class/dmi/id/product_name", "p5e.metal\n");
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kPass);

  // virtio only: could be a DPU.
  extra_.push_back(virtio);
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kInfo);

  // Nothing readable.
  extra_.clear();
  dir_.remove("sys/class/dmi");
  machine_.cpu.evidence_file.clear();
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kUnknown);
  expect_evidence_on_non_pass(fs);

  // A cpuinfo without a flags line (--cpu's assumed CPU) does not say "no hypervisor flag".
  machine_.cpu.evidence_file = "/proc/cpuinfo";
  machine_.cpu.flags_read = false;
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kUnknown);
  EXPECT_TRUE(has_evidence(*find(fs, "gpu.virtualization"), "/proc/cpuinfo", "no flags line"));
  machine_.cpu.flags_read = true;
  fs = run();
  EXPECT_EQ(find(fs, "gpu.virtualization")->level, Level::kPass);
  EXPECT_TRUE(contains(find(fs, "gpu.virtualization")->message, "no hypervisor CPU flag"));
}

TEST_F(GpuStack, EachFileIsReadOnce) {
  dir_.write(gpu_.sysfs_path.substr(1) + "/mem_info_vram_total", "206158430208\n");
  run();
  const auto& reads = source_->access_log().file_reads;
  // Not vacuous: the files every part of the GPU check reads were read.
  for (const char* path :
       {"/sys/class/dmi/id/sys_vendor", "/sys/module/amdgpu/version", "/proc/kallsyms",
        "/sys/class/kfd/kfd/topology/nodes/1/properties", "/sys/class/kfd/kfd/topology/nodes/1/mem_banks/0/properties",
        "/sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0/mem_info_vram_total"})
    EXPECT_TRUE(reads.count(path)) << path << " was not read";
  for (const auto& [path, count] : reads) EXPECT_EQ(count, 1) << path;
}

}  // namespace
}  // namespace p2pcheck

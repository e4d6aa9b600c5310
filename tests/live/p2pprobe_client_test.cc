// The userspace side of the kernel module against a fake /dev/p2pprobe that follows the uapi.
#include "p2pcheck/live/p2pprobe_client.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <map>

#include "p2pcheck/checks/check.h"
#include "p2pcheck/report/report.h"
#include "p2pcheck/source/error.h"
#include "test_paths.h"
#include "uapi/p2pprobe.h"

namespace p2pcheck {
namespace {

// Answers as the module does: checks size, version and reserved fields, then looks up the pair.
class FakeModule : public IoctlDevice {
 public:
  unsigned api_version = P2PPROBE_API_VERSION;
  std::function<KernelVerdict(const Bdf&, const Bdf&)> answer;
  int calls = 0;

  int ioctl(unsigned long request, void* arg) override {
    ++calls;
    if (request == P2PPROBE_IOC_GET_INFO) {
      auto* info = static_cast<p2pprobe_info*>(arg);
      if (info->size != sizeof *info || info->version == 0) return -EINVAL;
      info->api_version = api_version;
      info->flags = P2PPROBE_INFO_P2PDMA | P2PPROBE_INFO_PROVIDER;
      std::strcpy(info->module_version, "1.0.0");
      std::strcpy(info->kernel_release, "6.12.117");
      return 0;
    }
    if (request == P2PPROBE_IOC_VERDICT) {
      auto* v = static_cast<p2pprobe_verdict*>(arg);
      if (v->size != sizeof *v || v->version != P2PPROBE_API_VERSION || v->client_bdev_fd != -1) return -EINVAL;
      for (auto r : v->reserved)
        if (r) return -EINVAL;
      Bdf provider{v->provider.domain, v->provider.bus, static_cast<std::uint8_t>(v->provider.devfn >> 3),
                   static_cast<std::uint8_t>(v->provider.devfn & 7)};
      Bdf client{v->client.domain, v->client.bus, static_cast<std::uint8_t>(v->client.devfn >> 3),
                 static_cast<std::uint8_t>(v->client.devfn & 7)};
      KernelVerdict k = answer(provider, client);
      v->distance = k.distance;
      v->map_type = k.map_type == MapType::kBusAddr          ? P2PPROBE_MAP_BUS_ADDR
                    : k.map_type == MapType::kThruHostBridge ? P2PPROBE_MAP_THRU_HOST_BRIDGE
                    : k.map_type == MapType::kNotSupported   ? P2PPROBE_MAP_NOT_SUPPORTED
                                                             : P2PPROBE_MAP_UNKNOWN;
      v->map_reason = k.map_type == MapType::kUnknown ? P2PPROBE_MAP_REASON_NOT_ALLOWED : P2PPROBE_MAP_REASON_PROBED;
      std::strcpy(v->provider_driver, "amdgpu");
      std::strcpy(v->client_driver, "nvme");
      return 0;
    }
    return -ENOTTY;
  }
  std::string path() const override { return "/dev/p2pprobe"; }
};

TEST(P2pprobeClient, ReadsModuleInfo) {
  auto fake = std::make_unique<FakeModule>();
  P2pprobeClient client(std::move(fake));
  ModuleInfo info = client.info();
  EXPECT_EQ(info.api_version, 1u);
  EXPECT_TRUE(info.p2pdma);
  EXPECT_EQ(info.kernel_release, "6.12.117");
}

TEST(P2pprobeClient, RefusesAnotherApiVersion) {
  auto fake = std::make_unique<FakeModule>();
  fake->api_version = 2;
  P2pprobeClient client(std::move(fake));
  try {
    client.info();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/dev/p2pprobe");
    EXPECT_NE(std::string(e.what()).find("API 2"), std::string::npos);
  }
}

TEST(P2pprobeClient, MapsTheVerdict) {
  auto fake = std::make_unique<FakeModule>();
  fake->answer = [](const Bdf& p, const Bdf& c) {
    EXPECT_EQ(p.str(), "0000:43:00.0");
    EXPECT_EQ(c.str(), "0000:45:00.0");
    return KernelVerdict{4, MapType::kThruHostBridge, "", true, "", ""};
  };
  P2pprobeClient client(std::move(fake));
  KernelVerdict v = client.verdict(*Bdf::parse("0000:43:00.0"), *Bdf::parse("0000:45:00.0"));
  EXPECT_EQ(v.distance, 4);
  EXPECT_EQ(v.map_type, MapType::kThruHostBridge);
  EXPECT_EQ(v.client_driver, "nvme");
}

TEST(P2pprobeClient, OpeningAMissingDeviceSaysWhatToDo) {
  try {
    open_ioctl_device("/nonexistent/p2pprobe");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kmod load"), std::string::npos);
  }
}

// A whole check with the module answering: agreement passes, a disagreement fails loudly.
TEST(P2pprobeClient, CheckComparesEveryPairWithTheKernel) {
  std::string root = std::string(P2PCHECK_FIXTURES) + "/xeon-broadwell-switch-acs/root";
  auto source = open_tree_source(root);
  auto fake = std::make_unique<FakeModule>();
  FakeModule* module = fake.get();
  // First run without the module gives our answers; the fake kernel repeats them.
  auto ours = run_check(*source, CheckOptions{});
  ASSERT_FALSE(ours->pairs.empty());  // the loops below must compare something
  std::map<std::pair<Bdf, Bdf>, KernelVerdict> kernel;
  for (const auto& d : ours->pairs)
    kernel[{d.walk.pair().gpu, d.walk.pair().nvme}] =
        KernelVerdict{d.distance.value_or(-1), d.map_type, "", false, "", ""};
  module->answer = [&](const Bdf& p, const Bdf& c) { return kernel.at({p, c}); };
  P2pprobeClient client(std::move(fake));
  CheckOptions options;
  options.ask_kernel_module = [&client](const PairList& pairs) { return ask_kernel_module(&client, "", pairs); };

  auto source2 = open_tree_source(root);
  auto agreed = run_check(*source2, options);
  ASSERT_EQ(agreed->pairs.size(), ours->pairs.size());
  for (const auto& d : agreed->pairs) EXPECT_EQ(d.kernel_agrees, Tri::kYes) << d.walk.pair().gpu.str();
  bool pass = false;
  for (const auto& f : agreed->findings) pass |= f.id == "kmod.kernel_verdict" && f.level == Level::kPass;
  EXPECT_TRUE(pass);

  // The kernel allows a pair we refuse: a bug in our rules or a kernel patch.
  auto& first = kernel.begin()->second;
  first.distance = first.distance < 0 ? 6 : -1;
  auto source3 = open_tree_source(root);
  auto disagreed = run_check(*source3, options);
  EXPECT_EQ(disagreed->result, Result::kFail);
  int disagreements = 0;
  for (const auto& d : disagreed->pairs) disagreements += d.kernel_agrees == Tri::kNo;
  EXPECT_EQ(disagreements, 1);
  auto json = check_document(*disagreed);
  bool found = false;
  for (const auto& answer : json["kernel_answers"])  // the module's answers, by pair index
    if (answer["agrees"] == false && answer["pair"] < json["pairs"].size()) found = true;
  EXPECT_TRUE(found);
  EXPECT_NE(check_text(*disagreed, TextStyle{}).find("DISAGREES"), std::string::npos);
}

TEST(P2pprobeClient, AgreementIsDistanceSupportAndObservedMapType) {
  PairDecision d;
  d.distance = 4;
  d.map_type = MapType::kBusAddr;
  EXPECT_TRUE(agrees(d, {4, MapType::kBusAddr, "", false, "", ""}));
  EXPECT_TRUE(agrees(d, {4, MapType::kUnknown, "not observed", false, "", ""}));
  EXPECT_FALSE(agrees(d, {4, MapType::kThruHostBridge, "", false, "", ""}));
  EXPECT_FALSE(agrees(d, {-1, MapType::kUnknown, "", false, "", ""}));
  d.distance.reset();  // we could not decide: never counts as agreeing
  EXPECT_FALSE(agrees(d, {4, MapType::kUnknown, "", false, "", ""}));
}

}  // namespace
}  // namespace p2pcheck

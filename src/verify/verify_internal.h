// What verify's plan (verify.cc) and its run (verify_run.cc) share. Internal to src/verify/.
#pragma once

#include <string>

namespace p2pcheck {

// A duration in seconds as messages print it: "30", "2.5".
std::string seconds_text(double s);

}  // namespace p2pcheck

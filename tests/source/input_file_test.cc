#include "p2pcheck/source/input_file.h"

#include <unistd.h>

#include <functional>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "p2pcheck/source/error.h"
#include "test_tree.h"

namespace p2pcheck {
namespace {

using testing::TempDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Issue 33: `--dump FIFO` and `--plan FIFO` blocked forever in a stream's open.
TEST(InputFile, RefusesAFifoByNameWithoutBlocking) {
  TempDir dir;
  std::string fifo = dir.path() + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { input_type(fifo, "dump"); }),
            fifo + ": a FIFO (named pipe), not a regular file or directory: only those are read as input");
  EXPECT_EQ(error_of([&] { open_input_file(fifo, "the plan file"); }),
            fifo + ": a FIFO (named pipe), not a regular file: only those are read as input");
  EXPECT_EQ(error_of([&] { read_input_file(fifo, 100, "the plan file", "why"); }),
            fifo + ": a FIFO (named pipe), not a regular file: only those are read as input");
  EXPECT_EQ(error_of([&] { open_input_file(dir.path(), "the plan file"); }),
            dir.path() + ": a directory, not a regular file: only those are read as input");
  EXPECT_EQ(read_input_head(fifo, 16), "");
}

TEST(InputFile, RefusesDevicesAndSockets) {
  EXPECT_NE(error_of([] { input_type("/dev/null", "a dump"); }).find("a character device, not a regular file"),
            std::string::npos);
  EXPECT_EQ(read_input_head("/dev/zero", 16), "");
  TempDir dir;
  std::string sock = dir.path() + "/sock";
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  sock.copy(addr.sun_path, sock.size());
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(error_of([&] { input_type(sock, "a dump"); }),
            sock + ": a socket, not a regular file or directory: only those are read as input");
  close(s);
}

TEST(InputFile, ReadsRegularFilesAndTellsDirectories) {
  TempDir dir;
  dir.write("f", "hello world");
  std::string f = dir.path() + "/f";
  EXPECT_EQ(input_type(f, "x"), InputType::kFile);
  EXPECT_EQ(input_type(dir.path(), "x"), InputType::kDirectory);
  EXPECT_EQ(read_input_file(f, 100, "x", "y"), "hello world");
  EXPECT_EQ(read_input_head(f, 5), "hello");
  EXPECT_EQ(read_input_head(f, 100), "hello world");
  EXPECT_EQ(error_of([&] { input_type(dir.path() + "/missing", "the plan file"); }),
            dir.path() + "/missing: cannot open the plan file: No such file or directory");
  dir.write("big", std::string((1 << 20) + 1, 'x'));
  EXPECT_EQ(error_of([&] { read_input_file(dir.path() + "/big", 1 << 20, "x", "no plan is that large"); }),
            dir.path() + "/big: larger than 1 MiB; no plan is that large");
}

}  // namespace
}  // namespace p2pcheck

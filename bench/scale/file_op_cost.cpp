// What a file costs in the kernel here, per operation, for the per-location model of the archive
// tools: a null system call, opening and reading a small file, creating and writing one. Usage:
// scale_file_op_cost DIR [FILE_BYTES] (DIR: on the file system the tools use, e.g. /dev/shm).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace {

double us_per(std::chrono::steady_clock::time_point start, int n) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         n;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [FILE_BYTES]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = std::filesystem::path(argv[1]) / "htrace-file-op-cost";
  const size_t bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 6695;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<char> buffer(bytes, 'x');
  constexpr int kCalls = 200000, kFiles = 16384;

  auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i)
    syscall(SYS_getppid);
  std::printf("null system call (getppid): %.2f us\n", us_per(t, kCalls));

  t = std::chrono::steady_clock::now();
  for (int i = 0; i < kFiles; ++i) {
    const std::string path = (dir / (std::to_string(i) + ".evt")).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, buffer.data(), bytes) != static_cast<ssize_t>(bytes)) return 1;
    ::close(fd);
  }
  std::printf("create, write %zu bytes, close: %.2f us\n", bytes, us_per(t, kFiles));

  t = std::chrono::steady_clock::now();
  for (int i = 0; i < kFiles; ++i) {
    const std::string path = (dir / (std::to_string(i) + ".evt")).string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::pread(fd, buffer.data(), bytes, 0) != static_cast<ssize_t>(bytes)) return 1;
    ::close(fd);
  }
  std::printf("open, read %zu bytes, close: %.2f us\n", bytes, us_per(t, kFiles));

  t = std::chrono::steady_clock::now();
  for (int i = 0; i < kFiles; ++i) {
    const int fd = ::open((dir / (std::to_string(i) + ".evt")).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    ::close(fd);
  }
  std::printf("open, close: %.2f us\n", us_per(t, kFiles));
  std::filesystem::remove_all(dir);
  return 0;
}

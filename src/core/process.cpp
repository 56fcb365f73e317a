#include "core/process.hpp"

#include <gnu/libc-version.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace podnet {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
}

void use_huge_pages(char** argv) {
  if (argv == nullptr || argv[0] == nullptr) return;
  const char* off = std::getenv("PODNET_HUGE_PAGES");
  if (off != nullptr && std::strcmp(off, "0") == 0) return;
  if (std::getenv("PODNET_HUGE_PAGES_SET") != nullptr) return;  // re-executed once already
  const char* old = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = old != nullptr ? old : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 || (major == 2 && minor < 35))
    return;  // no glibc.malloc.hugetlb before glibc 2.35
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) return;  // valgrind
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(mode_file, mode) || mode.find("[madvise]") == std::string::npos) return;
  const std::string with = tunables.empty() ? "glibc.malloc.hugetlb=1" : tunables + ":glibc.malloc.hugetlb=1";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0 || setenv("PODNET_HUGE_PAGES_SET", "1", 1) != 0) return;
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // The exec failed: go on as this process, its environment as it was.
  if (old != nullptr) {
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
  unsetenv("PODNET_HUGE_PAGES_SET");
}

void return_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

}  // namespace podnet

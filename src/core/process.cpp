#include "core/process.hpp"

#include <link.h>
#include <malloc.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace podnet {

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
}

namespace {

std::string g_huge_pages = "off (not asked)";

// Whether a sanitizer's allocator replaces glibc's malloc (the tunable would do nothing).
constexpr bool kSanitizerAllocator =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

// PODNET_HUGE_PAGES read as a switch: -1 off, 1 on, 0 unset or neither.
int user_choice() {
  const char* v = std::getenv("PODNET_HUGE_PAGES");
  if (v == nullptr) return 0;
  for (const char* off : {"0", "off", "false", "no"})
    if (strcasecmp(v, off) == 0) return -1;
  for (const char* on : {"1", "on", "true", "yes"})
    if (strcasecmp(v, on) == 0) return 1;
  return 0;
}

// The kernel's transparent huge page mode: the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled.
std::string thp_mode() {
  std::string line;
  {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");  // closed before any exec
    if (!std::getline(f, line)) return "";
  }
  const auto a = line.find('['), b = line.find(']');
  return a != std::string::npos && b != std::string::npos && b > a ? line.substr(a + 1, b - a - 1) : "";
}

bool started_through_the_loader() {
  if (getauxval(AT_BASE) != 0) return false;
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR));
  const auto n = getauxval(AT_PHNUM);
  for (unsigned long i = 0; phdr != nullptr && i < n; ++i)
    if (phdr[i].p_type == PT_INTERP) return true;
  return false;
}

}  // namespace

std::string huge_pages_state() { return g_huge_pages; }

bool free_page_reporting() {
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/virtio/devices", ec)) {
    std::string id, features;
    {
      std::ifstream d(dev.path() / "device");
      std::getline(d, id);
    }
    if (id != "0x0005") continue;              // not a memory balloon
    std::ifstream f(dev.path() / "features");  // one character per feature bit, bit 0 first
    std::getline(f, features);
    if (features.size() > 5 && features[5] == '1') return true;
  }
  return false;
}

void use_huge_pages(char** argv) {
  // The marker carries what GLIBC_TUNABLES held before the re-exec ("=" + value, or "-" for unset): this image
  // runs with the tunable read already, so the environment its children see is put back as it was.
  if (const char* marker = std::getenv("PODNET_HUGE_PAGES_SET"); marker != nullptr) {
    const std::string was = marker;
    unsetenv("PODNET_HUGE_PAGES_SET");
    if (was == "-" || (!was.empty() && was[0] == '=')) {  // a marker this function wrote: put the variable back
      const char* now = std::getenv("GLIBC_TUNABLES");
      const bool asked = now != nullptr && std::strstr(now, "glibc.malloc.hugetlb=1") != nullptr;
      if (was[0] == '=') {
        setenv("GLIBC_TUNABLES", was.c_str() + 1, 1);
      } else {
        unsetenv("GLIBC_TUNABLES");
      }
      g_huge_pages = asked ? "on (glibc.malloc.hugetlb=1; PODNET_HUGE_PAGES=0 turns them off)"
                           : "off (the tunable did not reach the re-executed process)";
      return;
    }
    // Not a marker of ours: ignored, as on a first start (the re-exec below writes a valid one).
  }
  if (argv == nullptr || argv[0] == nullptr) return;
  const int choice = user_choice();
  if (choice < 0) {
    g_huge_pages = "off (PODNET_HUGE_PAGES)";
    return;
  }
  if (kSanitizerAllocator) {
    g_huge_pages = "off (a sanitizer's allocator)";
    return;
  }
  // Started through the dynamic loader (`ld.so podnet ...`): /proc/self/exe is the loader, not podnet. The kernel
  // then loaded no interpreter (AT_BASE 0) for a program that names one (PT_INTERP); a static binary names none.
  if (started_through_the_loader()) {
    g_huge_pages = "off (started through the dynamic loader)";
    return;
  }
#ifdef __GLIBC__
  const char* old = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = old != nullptr ? old : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) {
    g_huge_pages = "as GLIBC_TUNABLES sets it";
    return;
  }
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major < 2 || (major == 2 && minor < 35)) {
    g_huge_pages = "off (glibc before 2.35)";
    return;
  }
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) {
    g_huge_pages = "off (valgrind)";
    return;
  }
  const std::string mode = thp_mode();
  if (mode != "madvise") {
    g_huge_pages = mode.empty()      ? "off (no transparent huge pages)"
                   : mode == "never" ? "off (transparent_hugepage never)"
                                     : "as the kernel gives them (transparent_hugepage " + mode + ")";
    return;
  }
  if (choice == 0 && free_page_reporting()) {
    g_huge_pages = "off (this virtual machine hands freed memory back to its host, so fresh huge pages cost more "
                   "than they save; PODNET_HUGE_PAGES=1 turns them on)";
    return;
  }
  const std::string with = tunables.empty() ? "glibc.malloc.hugetlb=1" : tunables + ":glibc.malloc.hugetlb=1";
  const std::string marker = old != nullptr ? "=" + tunables : "-";
  if (setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0 || setenv("PODNET_HUGE_PAGES_SET", marker.c_str(), 1) != 0) return;
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  // The exec failed: go on as this process, its environment as it was.
  if (old != nullptr) {
    setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
  unsetenv("PODNET_HUGE_PAGES_SET");
  g_huge_pages = "off (the re-exec failed)";
#else
  g_huge_pages = "off (not glibc)";
#endif
}

void return_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

}  // namespace podnet

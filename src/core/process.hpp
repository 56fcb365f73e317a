// Process-wide settings podnet applies once at start (the podnet binary and
// every benchmark).
#pragma once

#include <string>

namespace podnet {

// Keeps the memory podnet frees for its next allocations instead of handing
// it back to the kernel: glibc's malloc serves blocks up to 32 MiB (its
// largest allowed M_MMAP_THRESHOLD) from its heap rather than from a fresh
// mmap each, and trims the heap only past 1 GiB of free space at its top
// (M_TRIM_THRESHOLD; mallopt(3)). Without this, each run of an engine maps
// its per-link arrays anew and the kernel zeroes every page on first touch
// and unmaps it at the end: a flow-engine run on aipod-16k (163,840 directed
// links) spent most of its set-up in page faults, and a 21-size bench of
// sendrecv took 0.52 s where it now takes 0.21 s (docs/contributing/validation/speed.md,
// "Memory kept between runs"). Peak resident memory is unchanged; memory freed late in a run
// may stay resident until the process exits. Results do not depend on it.
// No effect under a sanitizer's allocator.
void keep_freed_memory();
// Runs this process again, once, with glibc's malloc asking the kernel for
// transparent huge pages (the tunable GLIBC_TUNABLES=glibc.malloc.hugetlb=1,
// glibc 2.35 and later: madvise(MADV_HUGEPAGE) on the memory it takes from the
// kernel), when the kernel grants huge pages only to memory that asks for them
// (/sys/kernel/mm/transparent_hugepage/enabled reads "[madvise]", as on the
// development machine). podnet's engines spend much of a run touching fresh
// memory and walking large arrays: 2 MiB pages take 512 times fewer page
// faults and TLB entries. Measured on the 2-core development machine (whole
// process, median of 6 paired runs): `podnet train aipod-16k` 2.21 -> 1.79 s,
// peak memory +9 MB (docs/contributing/validation/speed.md, "Huge pages"). Must be
// called first thing in main, with main's argv: the process image is replaced
// (same arguments and pid; static initialisers run again), so nothing done
// before the call survives. The re-executed image puts GLIBC_TUNABLES back as
// it was (glibc has read it by then). Does nothing when GLIBC_TUNABLES already
// names the tunable, when PODNET_HUGE_PAGES is 0 (off, false, no), when the
// kernel's mode is "always" or "never", under a sanitizer's allocator, glibc
// before 2.35, valgrind, or when started through the dynamic loader; if the
// exec fails, the process goes on as it was. Results do not depend on it (the
// same bytes out either way).
// Nor does it in a virtual machine that hands the memory it frees back to its
// host (free_page_reporting()), unless PODNET_HUGE_PAGES is 1 (on, true,
// yes). There a huge page podnet touches first is a page the host must back
// anew: 2.6-3.0 s per GiB on the development machine, against 0.38 s with 4 KiB
// pages (0.14 s for a huge page the guest still holds). A 131,072-GPU
// analytical iteration took 10.3 s with huge pages and 6.2 s without (the same
// user time; docs/contributing/validation/speed.md, "Huge pages").
void use_huge_pages(char** argv);
// Whether this machine is a virtual machine whose memory balloon reports freed
// pages to the host (a virtio balloon, device id 5, with feature bit 5,
// VIRTIO_BALLOON_F_REPORTING; Linux's page_reporting hands back free blocks of
// 2 MiB and more, which the host then discards).
bool free_page_reporting();
// What use_huge_pages did, for `podnet --version`: "on (...)", "off (why)", or
// left to the kernel or to GLIBC_TUNABLES.
std::string huge_pages_state();
// glibc's defaults back (128 KiB for both): for a process that runs for long,
// `podnet serve`, which would otherwise keep what every study it ran freed.
void return_freed_memory();

}  // namespace podnet

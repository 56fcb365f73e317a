// Process-wide settings podnet applies once at start (the podnet binary and
// every benchmark).
#pragma once

namespace podnet {

// Keeps the memory podnet frees for its next allocations instead of handing
// it back to the kernel: glibc's malloc serves blocks up to 32 MiB (its
// largest allowed M_MMAP_THRESHOLD) from its heap rather than from a fresh
// mmap each, and trims the heap only past 1 GiB of free space at its top
// (M_TRIM_THRESHOLD; mallopt(3)). Without this, each run of an engine maps
// its per-link arrays anew and the kernel zeroes every page on first touch
// and unmaps it at the end: a flow-engine run on aipod-16k (163,840 directed
// links) spent most of its set-up in page faults, and a 21-size bench of
// sendrecv took 0.52 s where it now takes 0.21 s (docs/validation.md,
// "Speed"). Peak resident memory is unchanged; memory freed late in a run
// may stay resident until the process exits. Results do not depend on it.
// No effect under a sanitizer's allocator.
void keep_freed_memory();
// glibc's defaults back (128 KiB for both): for a process that runs for long,
// `podnet serve`, which would otherwise keep what every study it ran freed.
void return_freed_memory();

}  // namespace podnet

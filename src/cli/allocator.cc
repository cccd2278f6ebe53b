// jemalloc's options, compiled into the `tessera` binary (only builds that link jemalloc
// compile this file; MALLOC_CONF in the environment still overrides each option).
//
//   thp:always, metadata_thp:always  back the heap (and jemalloc's own tables) with
//     transparent huge pages where the kernel offers them (its "madvise" mode is Debian's
//     default): a restart builds hundreds of megabytes of job tables, and with 4 KiB pages a
//     third of its time went to page faults;
//   background_thread:true  returns freed memory to the system from jemalloc's own thread
//     instead of the engine's or the store's.
//
// Measured in docs/serve.md#performance (restart with all jobs active: about half the time).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface.
const char* malloc_conf = "thp:always,metadata_thp:always,background_thread:true";
}

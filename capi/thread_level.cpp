// MPI_Query_thread: the level libmmpi gave the application at MMPI_Init,
// not Open MPI's own (MPI_THREAD_MULTIPLE when the RMA progress thread may
// run, client/rma_progress.h).
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include "../client/runtime.h"

extern "C" {

int mmpi_impl_Query_thread(int* provided) {
  const zipper::client::Runtime* rt = zipper::client::Runtime::get();
  if (rt == nullptr) return MPI_Query_thread(provided);
  *provided = rt->thread_level();
  return MPI_SUCCESS;
}

}  // extern "C"

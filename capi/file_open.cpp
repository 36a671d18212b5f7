// MPI_File_open and _close across the clusters (docs/io.md, "Open"): each
// cluster opens the file with Open MPI's own MPI-IO on its native
// communicator; zipper first checks that both clusters see one file (a token
// that rank 0 creates in the file's directory and every other rank must read
// back) and then agrees the outcome, so that either every rank holds the
// file or every rank returns an error.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "file_state.h"
#include "handles.h"
#include "mmpi.h"
#include "mmpi_impl_generated.h"

using zipper::capi::FileState;

namespace {

// What rank 0 broadcasts about the token it created.
struct TokenMsg {
  std::int32_t err = 0;  // errno of creating it, 0 when it exists
  char name[44] = {};    // ".zipper-io-" + 32 hex digits
  unsigned char nonce[zipper::capi::kNonceBytes] = {};
};

// The file system path behind an MPI-IO file name (ROMIO and OMPIO accept a
// "ufs:" / "nfs:" / "lustre:" prefix naming the driver).
std::string fs_path(const std::string& name) {
  const auto colon = name.find(':');
  if (colon != std::string::npos && colon >= 2 && name.find('/') > colon) {
    bool word = true;
    for (std::size_t i = 0; i < colon; ++i)
      word = word && (std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_');
    if (word) return name.substr(colon + 1);
  }
  return name;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

char cluster_name(bool low) { return low ? 'A' : 'B'; }

int error_for_errno(int e) {
  switch (e) {
    case ENOENT:
    case ENOTDIR:
      return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
      return MPI_ERR_ACCESS;
    case EROFS:
      return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EDQUOT:
      return MPI_ERR_NO_SPACE;
    default:
      return MPI_ERR_FILE;
  }
}

// Rank 0: creates the token (never following a link, never reusing a file).
TokenMsg create_token(const std::string& dir, zipper::proto::UniqueFd* fd) {
  TokenMsg m;
  unsigned char rnd[16 + zipper::capi::kNonceBytes];
  if (getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) {
    m.err = errno != 0 ? errno : EIO;
    return m;
  }
  std::memcpy(m.nonce, rnd + 16, sizeof m.nonce);
  std::snprintf(m.name, sizeof m.name, ".zipper-io-");
  for (int i = 0; i < 16; ++i) std::snprintf(m.name + 11 + 2 * i, 3, "%02x", rnd[i]);
  const std::string path = dir + "/" + m.name;
  fd->reset(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd->valid()) {
    m.err = errno;
    return m;
  }
  unsigned char init[zipper::capi::kAuxBytes] = {};
  std::memcpy(init + zipper::capi::kAuxNonce, m.nonce, sizeof m.nonce);
  if (pwrite(fd->get(), init, sizeof init, 0) != static_cast<ssize_t>(sizeof init)) {
    m.err = errno != 0 ? errno : EIO;
    ::unlink(path.c_str());
    fd->reset();
  }
  return m;
}

// Every other rank: 0 when it sees rank 0's token, else an MPI error class.
int check_token(const std::string& dir, const TokenMsg& m, zipper::proto::UniqueFd* fd) {
  fd->reset(::open((dir + "/" + m.name).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!fd->valid())
    return error_for_errno(errno) == MPI_ERR_NO_SUCH_FILE ? MPI_ERR_NO_SUCH_FILE : MPI_ERR_FILE;
  unsigned char nonce[zipper::capi::kNonceBytes];
  if (pread(fd->get(), nonce, sizeof nonce, zipper::capi::kAuxNonce) !=
          static_cast<ssize_t>(sizeof nonce) ||
      std::memcmp(nonce, m.nonce, sizeof nonce) != 0)
    return MPI_ERR_FILE;  // a file of that name, but not the one rank 0 made
  return MPI_SUCCESS;
}

void say(int world_rank, const std::string& text) {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", world_rank, text.c_str());
  std::fflush(stderr);
}

int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

std::string error_text(int rc) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  return std::string(s, static_cast<std::size_t>(len));
}

// Agrees per-cluster outcomes over the spanning communicator: out[0] is A's
// (the largest error class of its ranks), out[1] B's.
int agree(int mine, bool low, MPI_Comm comm, int out[2]) {
  int in[2] = {0, 0};
  in[low ? 0 : 1] = mine;
  return mmpi_impl_Allreduce(in, out, 2, MPI_INT, MPI_MAX, comm);
}

// The native open's mode. DELETE_ON_CLOSE: zipper deletes the file once
// both clusters closed it. SEQUENTIAL: only shared-pointer access, which
// zipper serves; views then take the displacement zipper computes
// (MPI_DISPLACEMENT_CURRENT).
int native_amode(int amode) { return amode & ~(MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_SEQUENTIAL); }

// MPI_MODE_EXCL: rank 0's cluster creates the file, then the other opens
// what it created; agreed[0..1] get each cluster's outcome.
int open_exclusive(const FileState& s, MPI_Comm native, bool first, bool low, MPI_Info info,
                   MPI_File* nf, int* mine, int agreed[2]) {
  const int amode = native_amode(s.amode);
  const char* name = s.path.c_str();
  *mine = MPI_SUCCESS;
  if (first) *mine = MPI_File_open(native, name, amode, info, nf);
  int rc = agree(error_class(*mine), low, s.comm, agreed);
  if (rc != MPI_SUCCESS || agreed[0] != 0 || agreed[1] != 0) return rc;
  if (!first)
    *mine = MPI_File_open(native, name, amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL), info, nf);
  return agree(error_class(*mine), low, s.comm, agreed);
}

}  // namespace

int MMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  using namespace zipper;
  client::Runtime* rt = nullptr;
  std::shared_ptr<client::Comm> c;
  int rc = capi::lookup(comm, &rt, &c);
  if (rc != MPI_SUCCESS) return capi::file_error(MPI_FILE_NULL, rc);
  if (filename == nullptr || fh == nullptr) return capi::file_error(MPI_FILE_NULL, MPI_ERR_ARG);
  auto s = std::make_unique<FileState>();
  s->path = filename;
  s->amode = amode;
  s->spans = !c->intra_cluster();
  s->lock_timeout = rt->settings().calls.file_lock_timeout;
  rc = mmpi_impl_Comm_dup(comm, &s->comm);
  if (rc != MPI_SUCCESS) return capi::file_error(MPI_FILE_NULL, rc);
  std::shared_ptr<client::Comm> dup;
  capi::lookup(s->comm, &rt, &dup);
  s->native_comm = dup->native_coll();
  if (!s->spans) {
    rc = MPI_File_open(dup->native(), filename, amode, info, &s->native);
    if (rc != MPI_SUCCESS) {
      mmpi_impl_Comm_free(&s->comm);
      return rc;  // Open MPI applied MPI_FILE_NULL's handler
    }
    *fh = s->native;
    capi::add_file(s.release());
    return MPI_SUCCESS;
  }

  const bool low = rt->offset() == 0;
  const bool first = dup->map().is_local(0);  // in rank 0's cluster
  const char rank0_cluster = cluster_name(first ? low : !low);
  const std::string dir = dir_of(fs_path(s->path));
  auto fail = [&](int code, bool handler_ran) {
    mmpi_impl_Comm_free(&s->comm);
    return handler_ran ? code : capi::file_error(MPI_FILE_NULL, code);
  };

  // 1. The token: both clusters must see the one rank 0 created.
  TokenMsg m;
  if (dup->rank() == 0) m = create_token(dir, &s->aux);
  rc = mmpi_impl_Bcast(&m, sizeof m, MPI_BYTE, 0, s->comm);
  if (rc != MPI_SUCCESS) return fail(rc, false);
  if (m.err != 0) {
    say(rt->rank(), "MPI_File_open(\"" + s->path + "\"): cluster " + rank0_cluster +
                        " cannot create the shared-file token in " + dir + ": " +
                        std::strerror(m.err));
    return fail(error_for_errno(m.err), false);
  }
  // Every rank checks it; the cluster agrees natively (cheap), so that it
  // opens the file or not as one.
  int seen = dup->rank() == 0 ? MPI_SUCCESS : check_token(dir, m, &s->aux);
  int cluster_seen = MPI_SUCCESS;
  MPI_Allreduce(&seen, &cluster_seen, 1, MPI_INT, MPI_MAX, s->native_comm);
  int native_rank = 0;
  MPI_Comm_rank(s->native_comm, &native_rank);

  // 2. Without MPI_MODE_EXCL both clusters open at once, before the clusters
  // agree, and one allreduce agrees both the check and the opens (an open
  // round trip less). A cluster that created the file for nothing removes it.
  const bool excl = (amode & MPI_MODE_EXCL) != 0;
  int mine = MPI_SUCCESS;
  bool existed = true;
  if (!excl && cluster_seen == MPI_SUCCESS) {
    if (native_rank == 0 && (amode & MPI_MODE_CREATE))
      existed = ::access(fs_path(s->path).c_str(), F_OK) == 0;
    mine = MPI_File_open(dup->native(), filename, native_amode(amode), info, &s->native);
  }
  int in[4] = {0, 0, 0, 0}, out[4] = {0, 0, 0, 0};
  in[low ? 0 : 1] = cluster_seen;
  in[low ? 2 : 3] = error_class(mine);
  rc = mmpi_impl_Allreduce(in, out, 4, MPI_INT, MPI_MAX, s->comm);
  // Every rank holds the token open (or has failed to) once the allreduce is
  // done: the name can go, the open descriptions keep the file.
  if (dup->rank() == 0) ::unlink((dir + "/" + m.name).c_str());
  auto undo_open = [&] {
    const bool opened = mine == MPI_SUCCESS && s->native != MPI_FILE_NULL;
    if (opened) MPI_File_close(&s->native);
    if (opened && native_rank == 0 && !existed) MPI_File_delete(filename, MPI_INFO_NULL);
    MPI_Barrier(s->native_comm);  // gone for the whole cluster once open returns
  };
  if (rc != MPI_SUCCESS) {
    undo_open();
    return fail(rc, false);
  }
  if (out[0] != 0 || out[1] != 0) {
    undo_open();
    const bool a_blind = out[0] != 0;
    const int code = a_blind ? out[0] : out[1];
    say(rt->rank(), "MPI_File_open(\"" + s->path + "\"): cluster " + cluster_name(a_blind) +
                        " cannot see the file that cluster " + rank0_cluster + " sees in " + dir +
                        (code == MPI_ERR_NO_SUCH_FILE ? " (token missing)" : " (token differs)") +
                        ": both clusters must mount one shared file system there (" +
                        (code == MPI_ERR_NO_SUCH_FILE ? "MPI_ERR_NO_SUCH_FILE" : "MPI_ERR_FILE") +
                        ")");
    return fail(code, false);
  }
  if (excl) {
    // Rank 0's cluster creates the file, then the other opens it.
    rc = open_exclusive(*s, dup->native(), first, low, info, &s->native, &mine, &out[2]);
    if (rc != MPI_SUCCESS) {
      undo_open();
      return fail(rc, false);
    }
  }
  if (out[2] != 0 || out[3] != 0) {
    undo_open();
    const bool a_failed = out[2] != 0;
    const int code = a_failed ? out[2] : out[3];
    say(rt->rank(), "MPI_File_open(\"" + s->path + "\") failed on cluster " +
                        cluster_name(a_failed) + ": " + error_text(code));
    return fail(mine != MPI_SUCCESS ? mine : code, mine != MPI_SUCCESS);
  }
  *fh = s->native;
  capi::add_file(s.release());
  return MPI_SUCCESS;
}

int MMPI_File_close(MPI_File* fh) {
  using namespace zipper;
  if (fh == nullptr) return MPI_ERR_ARG;
  FileState* s = capi::find_file(*fh);
  if (s == nullptr) return MPI_File_close(fh);  // not ours: Open MPI says what it is
  const MPI_File key = *fh;
  int rc = MPI_File_close(&s->native);
  if (rc != MPI_SUCCESS) return rc;
  // Close synchronises across the clusters, as Open MPI's does within one:
  // what any rank wrote is in the file for whoever opens it after any close
  // returned (MPICH's io/i_coll_test reads it on rank 0 right away).
  if (s->spans) rc = mmpi_impl_Barrier(s->comm);
  if (rc == MPI_SUCCESS && (s->amode & MPI_MODE_DELETE_ON_CLOSE)) {
    // Natively opened without it: the file goes once every cluster closed it.
    int me = 0;
    mmpi_impl_Comm_rank(s->comm, &me);
    if (me == 0) MPI_File_delete(s->path.c_str(), MPI_INFO_NULL);
    // Gone for every rank once close returns.
    if (s->spans) rc = mmpi_impl_Barrier(s->comm);
  }
  mmpi_impl_Comm_free(&s->comm);
  capi::remove_file(key);
  *fh = MPI_FILE_NULL;
  return rc == MPI_SUCCESS ? rc : capi::file_error(MPI_FILE_NULL, rc);
}

int MMPI_File_get_group(MPI_File fh, MPI_Group* group) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return zipper::capi::file_error(fh, MPI_ERR_FILE);
  const int rc = mmpi_impl_Comm_group(s->comm, group);
  return rc == MPI_SUCCESS ? rc : zipper::capi::file_error(fh, rc);
}

int MMPI_File_get_amode(MPI_File fh, int* amode) {
  FileState* s = zipper::capi::find_file(fh);
  if (s == nullptr) return MPI_File_get_amode(fh, amode);
  *amode = s->amode;
  return MPI_SUCCESS;
}

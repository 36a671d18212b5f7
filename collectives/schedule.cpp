#include "schedule.h"

#include <algorithm>

namespace zipper::coll {

namespace {
std::vector<Schedule*> g_started;  // registered at start, removed at destruction
}  // namespace

Schedule::Schedule(const Topology& t, int tag) : t_(t), tag_(tag) {}

Schedule::~Schedule() {
  for (client::RequestPtr& r : active_)
    if (!t_.p2p->test(*r)) (void)r.release();  // leaked on purpose, see the header
  std::erase(g_started, this);
  for (MPI_Datatype& type : kept_) MPI_Type_free(&type);
}

void Schedule::send(const void* buf, int count, MPI_Datatype type, int peer) {
  rounds_.back().push_back(
      Step{Step::Kind::kSend, const_cast<void*>(buf), count, keep(type), peer, {}});
}

void Schedule::recv(void* buf, int count, MPI_Datatype type, int peer) {
  rounds_.back().push_back(Step{Step::Kind::kRecv, buf, count, keep(type), peer, {}});
}

void Schedule::local(std::function<int()> step) {
  rounds_.back().push_back(Step{Step::Kind::kLocal, nullptr, 0, MPI_DATATYPE_NULL, 0, step});
}

void Schedule::end_round() {
  if (!rounds_.back().empty()) rounds_.emplace_back();
}

void* Schedule::scratch(MPI_Aint count, MPI_Datatype type) {
  scratch_.push_back(std::make_unique<TypedBuffer>(count, type));
  return scratch_.back()->data();
}

MPI_Datatype Schedule::keep(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return type;
  for (MPI_Datatype k : kept_)
    if (k == type) return k;  // already our own duplicate
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (MPI_Type_dup(type, &dup) != MPI_SUCCESS) return type;
  kept_.push_back(dup);
  return dup;
}

MPI_Op Schedule::keep_op(MPI_Op op) {
  for (const client::OpRef& k : kept_ops_)
    if (k.get() == op) return op;
  kept_ops_.emplace_back(op);
  return op;
}

int Schedule::start() {
  started_ = true;
  g_started.push_back(this);
  if (start_round() != MPI_SUCCESS) done_ = true;
  return error_;
}

int Schedule::start_round() {
  for (Step& s : rounds_[round_]) {
    client::RequestPtr r;
    int rc = MPI_SUCCESS;
    switch (s.kind) {
      case Step::Kind::kLocal:
        rc = s.fn();
        break;
      case Step::Kind::kSend:
        rc = t_.p2p->isend(t_.comm, client::Traffic::kCollective, s.buf, s.count, s.type, s.peer,
                           tag_, &r, client::SendMode::kStandard);
        break;
      case Step::Kind::kRecv:
        rc = t_.p2p->irecv(t_.comm, client::Traffic::kCollective, s.buf, s.count, s.type, s.peer,
                           tag_, &r);
        break;
    }
    if (r) active_.push_back(std::move(r));
    if (rc != MPI_SUCCESS) return error_ = rc;
  }
  return MPI_SUCCESS;
}

bool Schedule::advance() {
  while (started_ && !done_) {
    for (std::size_t i = 0; i < active_.size();) {
      client::Request& r = *active_[i];
      if (!t_.p2p->test(r)) {
        ++i;
        continue;
      }
      if (r.error != MPI_SUCCESS && error_ == MPI_SUCCESS) error_ = r.error;
      active_[i] = std::move(active_.back());
      active_.pop_back();
    }
    if (!active_.empty()) break;
    if (error_ != MPI_SUCCESS || ++round_ == rounds_.size()) {
      done_ = true;
      break;
    }
    if (start_round() != MPI_SUCCESS) done_ = true;
  }
  return done_;
}

bool Schedule::poll(client::Request& outer) {
  outer.error = error_;
  return done_;
}

bool Schedule::advance_all() {
  bool busy = false;
  for (std::size_t i = 0; i < g_started.size(); ++i) busy |= !g_started[i]->advance();
  return busy;
}

}  // namespace zipper::coll

// VerbsLink send methods, one function each, as UCX's rc_verbs endpoint
// (am_short, am_bcopy, am_zcopy, put_zcopy): the layer above
// (verbs_send.cpp) picks one per SEND. Every method takes a receive credit
// (credits.h) and returns owed credits in the immediate data; data methods
// keep the last credit for credit messages.
#include <arpa/inet.h>

#include <cstring>

#include "verbs_link.h"

namespace zipper::proto::verbs {

bool VerbsLink::data_room_locked() const {
  return posted_.size() < max_send_wr_ && credits_.can_send_data();
}

bool VerbsLink::post_wr_locked(ibv_send_wr& wr, int slot, const char* what, LinkStatus* st) {
  wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (const int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) {
    if (slot >= 0) free_slots_.push_back(slot);
    *st = fail(LinkError::from_errno(what, rc));
    return false;
  }
  posted_.push_back(PostedWr{slot});
  ++wr_posted_;
  return true;
}

// Inline (am_short): the HCA copies the bytes at post time; no lkey, no slot.
bool VerbsLink::post_inline_locked(SendKind kind, const Gather& g, LinkStatus* st) {
  if (!data_room_locked() || g.bytes > max_inline_) return false;
  const std::byte* from = g.count == 1 ? g.pieces[0].data : scratch_.data();
  if (g.count > 1) {  // several pieces: gather them (one piece is posted as it is)
    std::size_t at = 0;
    for (int i = 0; i < g.count; ++i) {
      std::memcpy(scratch_.data() + at, g.pieces[i].data, g.pieces[i].len);
      at += g.pieces[i].len;
    }
  }
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(from), static_cast<std::uint32_t>(g.bytes), 0};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_INLINE;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  return post_wr_locked(wr, -1, "ibv_post_send", st);
}

// Copy (am_bcopy): into a registered send slot, freed at the completion.
bool VerbsLink::post_copy_locked(SendKind kind, const Gather& g, LinkStatus* st) {
  if (!data_room_locked() || free_slots_.empty()) return false;
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  std::byte* dst = send_buf(slot);
  std::size_t at = 0;
  for (int i = 0; i < g.count; ++i) {
    std::memcpy(dst + at, g.pieces[i].data, g.pieces[i].len);
    at += g.pieces[i].len;
  }
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(dst), static_cast<std::uint32_t>(g.bytes),
              send_mr_->lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  return post_wr_locked(wr, slot, "ibv_post_send", st);
}

// Zero copy (am_zcopy): straight from the payload's registration; the memory
// must stay put until the completion.
bool VerbsLink::post_zcopy_locked(SendKind kind, const std::byte* data, std::size_t len,
                                  std::uint32_t lkey, LinkStatus* st) {
  if (!data_room_locked()) return false;
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(data), static_cast<std::uint32_t>(len), lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  return post_wr_locked(wr, -1, "ibv_post_send", st);
}

// RDMA WRITE with immediate (put_zcopy): the payload into the peer's granted
// destination; the immediate completes the frame there and takes a credit.
bool VerbsLink::post_rdma_write_locked(const std::byte* data, std::size_t len, std::uint32_t lkey,
                                       const WriteGrant& grant, LinkStatus* st) {
  if (!data_room_locked()) return false;
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(data), static_cast<std::uint32_t>(len), lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.imm_data = htonl(encode_imm(SendKind::kWriteData, credits_.on_send()));
  wr.wr.rdma.remote_addr = grant.addr;
  wr.wr.rdma.rkey = grant.rkey;
  return post_wr_locked(wr, -1, "ibv_post_send (RDMA WRITE)", st);
}

// Control (credit, FIN): no data; may use the credit data SENDs keep back.
bool VerbsLink::post_control_locked(SendKind kind, LinkStatus* st) {
  if (posted_.size() >= max_send_wr_ || credits_.credits() == 0) return false;
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.num_sge = 0;
  wr.imm_data = htonl(encode_imm(kind, credits_.on_send()));
  return post_wr_locked(wr, -1, "ibv_post_send", st);
}

}  // namespace zipper::proto::verbs

#pragma once
// Internal: Tensor::exchange_padding. A halo made of whole rows between two device blocks (the
// blocks share their x range, so a padded row of one is a padded row of the other) is copied on
// the devices, run of consecutive rows by run; anything else is staged
// through host requests of only the rows involved.

#include <algorithm>
#include <vector>

#include "tessera/device/device.hpp"
#include "tessera/tensor/detail/host_sites.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera {

namespace detail {
/// The first site of each line along x in `box`: both transfers walk a halo line by line.
template <std::size_t D>
Box<D> line_starts(Box<D> box) {
  box.hi.coords[0] = box.lo.coords[0] + 1;
  return box;
}
}  // namespace detail

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::exchange_padding(const StencilShape& stencil) {
  const std::size_t plan = stencil.plan_index<D>();
  if (local_halos_.empty()) local_halos_.resize(std::size_t{1} << D);
  if (!local_halos_[plan]) local_halos_[plan] = halo_transfers(stencil);
  for (const HaloTransfer<D>& h : *local_halos_[plan]) transfer(h);
  if (options_.ranks) exchange_rank_halos(rank_halos_[plan]);
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::transfer(const HaloTransfer<D>& h) {
  if (h.source >= num_blocks() || h.destination >= num_blocks() || (h.source == h.destination && h.shift == Index<D>{}))
    throw Error("tensor '" + options_.name + "': halo transfer from block " + std::to_string(h.source) + " to block " +
                std::to_string(h.destination) + " is not between two blocks of its " + std::to_string(num_blocks()) +
                "; pass a transfer from halo_transfers()");
  if (copies_on_devices(h))
    transfer_on_devices(h);
  else
    transfer_through_host(h);
}

template <typename T, std::size_t D, Layout L>
bool Tensor<T, D, L>::copies_on_devices(const HaloTransfer<D>& h) const {
  if (D == 1 || space(h.source) == 0 || space(h.destination) == 0 || h.shift.coords[0] != 0 ||
      h.source == h.destination)
    return false;
  // Whole rows: the box spans the padded x range of both blocks, or the whole domain along x
  // (both blocks are alone along x, so the rest of each padded row is outer padding, which the
  // copy then carries too: the values a global view of the source row has there).
  const std::size_t ends[2] = {h.source, h.destination};
  for (std::size_t b : ends) {
    // (A shift along y or z moves rows, not the sites within them: x is the same at both ends.)
    const BlockGeometry<D>& g = geometry_[b];
    const bool padded_row = h.box.lo.coords[0] == g.interior.lo.coords[0] - g.padding.coords[0] &&
                            h.box.hi.coords[0] == g.interior.hi.coords[0] + g.padding.coords[0];
    const bool domain_row = h.box.lo.coords[0] == 0 && h.box.hi.coords[0] == static_cast<std::int64_t>(sizes_.sizes[0]) &&
                            g.interior.lo.coords[0] == 0 && g.interior.hi.coords[0] == h.box.hi.coords[0];
    if (!padded_row && !domain_row) return false;
  }
  return true;
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::transfer_on_devices(const HaloTransfer<D>& h) {
  const std::size_t sa = space(h.source), sb = space(h.destination);
  Buffer& src = buffers_[h.source];
  Buffer& dst = buffers_[h.destination];
  Device& da = memory_->device(sa);
  Device& db = memory_->device(sb);
  // The copy streams, so halo copies overlap kernels on the compute streams.
  Stream& as = da.copy_stream(CopyDirection::device_to_device);
  Stream& bs = db.copy_stream(CopyDirection::device_to_device);
  const std::size_t row_bytes = geometry_[h.source].row_bytes;

  auto copy_run = [&](RowRange from, RowRange to) {
    auto* s = static_cast<std::byte*>(src.prepare(sa, as, Access::read, from));
    auto* d = static_cast<std::byte*>(dst.prepare(sb, bs, Access::write, to));
    if (&as != &bs) bs.wait(as.record());  // the source rows are current on device a
    db.copy_async(d + to.begin * row_bytes, s + from.begin * row_bytes, from.size() * row_bytes,
                  CopyDirection::device_to_device, bs);
    if (&as != &bs) as.wait(bs.record());  // later writers of the source wait for the copy
    src.finish(sa, as, Access::read, from);
    dst.finish(sb, bs, Access::write, to);
  };

  // One line per row of the box; consecutive rows in both blocks form one copy.
  RowRange from{0, 0}, to{0, 0};
  for_each_index(detail::line_starts(h.box), [&](const Index<D>& i) {
    const std::size_t rs = row_of(h.source, i - h.shift), rd = row_of(h.destination, i);
    if (!from.empty() && rs == from.end && rd == to.end) {
      ++from.end;
      ++to.end;
      return;
    }
    if (!from.empty()) copy_run(from, to);
    from = {rs, rs + 1};
    to = {rd, rd + 1};
  });
  if (!from.empty()) copy_run(from, to);
}

template <typename T, std::size_t D, Layout L>
void Tensor<T, D, L>::transfer_through_host(const HaloTransfer<D>& h) {
  // Site by site between host holds of only the rows involved, with no list of sites: halos
  // are copied every step. The destination's rows keep their other sites, so they are read in.
  Index<D> last = h.box.hi;
  for (std::size_t d = 0; d < D; ++d) last.coords[d] -= 1;
  const RowRange to{row_of(h.destination, h.box.lo), row_of(h.destination, last) + 1};
  const RowRange from{row_of(h.source, h.box.lo - h.shift), row_of(h.source, last - h.shift) + 1};
  const Index<D> src_lo = geometry_[h.source].interior.lo + h.shift, dst_lo = geometry_[h.destination].interior.lo;
  if (h.source == h.destination) {
    // A periodic block wrapping onto itself: one hold over both row ranges.
    const RowRange both{std::min(to.begin, from.begin), std::max(to.end, from.end)};
    const detail::HostHold hold(buffers_[h.source], Access::read_write, both);
    const BlockView<T, D, L> v{hold.base(), geometry_[h.source]};
    for_each_index(h.box, [&](const Index<D>& i) { v.at(i - dst_lo) = T(v.at(i - src_lo)); });
    return;
  }
  const detail::HostHold src(buffers_[h.source], Access::read, from);
  const detail::HostHold dst(buffers_[h.destination], Access::read_write, to);
  const BlockView<T, D, L> s{src.base(), geometry_[h.source]}, d{dst.base(), geometry_[h.destination]};
  // A line along x at a time, its rows found once: finding both rows for every site (as at()
  // does) cost Jacobi3D's 64^2-site faces 1.6 ns a site, a tenth of its iteration.
  using sites = LayoutTraits<T, L>;
  const std::int64_t width = h.box.hi.coords[0] - h.box.lo.coords[0];
  const auto sp = static_cast<std::ptrdiff_t>(s.geometry.pitch), dp = static_cast<std::ptrdiff_t>(d.geometry.pitch);
  for_each_index(detail::line_starts(h.box), [&](const Index<D>& i) {
    const Index<D> sl = i - src_lo, dl = i - dst_lo;
    std::byte* const srow = s.row(s.geometry.row_of(sl));
    std::byte* const drow = d.row(d.geometry.row_of(dl));
    const std::ptrdiff_t sx = sl.coords[0] + s.geometry.padding.coords[0], dx = dl.coords[0] + d.geometry.padding.coords[0];
    for (std::int64_t k = 0; k < width; ++k) sites::at(drow, dx + k, dp) = T(sites::at(srow, sx + k, sp));
  });
}

}  // namespace tessera

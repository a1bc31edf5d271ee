// copyToTargetMasked and copyFromTargetMasked: only the selected sites of SoA fields move. On a
// device target the sites are packed on the device into a scratch block (a stream job on sim),
// the packed block crosses, and the host unpacks it (and the reverse), as the targetDP paper's
// CUDA implementation does; on the host target the selected sites are copied in place.

#include "target_state.hpp"

#include <tessera/device/submit.hpp>

#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using tessera::CopyDirection;
using tessera::DeviceKind;
using tessera::targetdp::detail::Failure;
using tessera::targetdp::detail::guarded;
using tessera::targetdp::detail::TargetState;

namespace {

// A pack or unpack job on the target's stream, through the one device submission path.
void submit_host(tessera::Stream& stream, std::function<void()> work, std::string label) {
  tessera::submit(stream, {}, [&](tessera::Stream& s) { s.enqueue_host(std::move(work), std::move(label)); });
}

enum class Way { to_target, from_target };

std::vector<std::size_t> selected_sites(const char* mask, std::size_t nsites) {
  std::vector<std::size_t> sites;
  for (std::size_t s = 0; s < nsites; ++s)
    if (mask[s]) sites.push_back(s);
  return sites;
}

void check_arguments(const char* call, const void* target_data, const void* data, std::size_t nsites,
                     std::size_t nfields, const char* mask, std::size_t mask_length) {
  if (!data) throw Failure(tdpErrorInvalidValue, fmt::format("{}: the host data pointer is null", call));
  if (!mask) throw Failure(tdpErrorInvalidValue, fmt::format("{}: the site mask is null", call));
  if (mask_length != nsites)
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: the site mask has {} entries but the fields have {} sites; the mask needs one "
                              "entry per site",
                              call, mask_length, nsites));
  if (nfields != 0 && nsites > SIZE_MAX / sizeof(double) / nfields)
    throw Failure(tdpErrorInvalidValue,
                  fmt::format("{}: {} fields of {} sites overflow the address space", call, nfields, nsites));
  TargetState::instance().check_range(target_data, nsites * nfields * sizeof(double), call, "target");
}

void masked_copy(Way way, double* target_data, double* host_data, std::size_t nsites, std::size_t nfields,
                 const char* mask, const char* call) {
  auto& state = TargetState::instance();
  tessera::Device& target = state.target();
  if (target.kind() == DeviceKind::host) {
    for (std::size_t f = 0; f < nfields; ++f)
      for (std::size_t s = 0; s < nsites; ++s)
        if (mask[s]) {
          const std::size_t i = f * nsites + s;
          if (way == Way::to_target)
            target_data[i] = host_data[i];
          else
            host_data[i] = target_data[i];
        }
    return;
  }
  if (target.kind() == DeviceKind::cuda)
    throw Failure(tdpErrorTarget,
                  fmt::format("{}: packing on the target {} needs the file compiled by nvcc (the pack kernel is "
                              "instantiated there)",
                              call, target.name()));

  auto sites = std::make_shared<const std::vector<std::size_t>>(selected_sites(mask, nsites));
  const std::size_t packed_count = sites->size() * nfields;
  if (packed_count == 0) return;
  const std::size_t packed_bytes = packed_count * sizeof(double);
  auto* packed = static_cast<double*>(state.allocate(packed_bytes, call));
  struct Scratch {
    TargetState* state;
    double* p;
    ~Scratch() {
      try {
        state->deallocate(p, "masked copy scratch");
      } catch (...) {
      }
    }
  } scratch{&state, packed};
  std::vector<double> staging(packed_count);
  tessera::Stream& stream = state.stream();
  const std::size_t n = sites->size();
  if (way == Way::from_target) {
    submit_host(
        stream,
        [=] {
          for (std::size_t f = 0; f < nfields; ++f)
            for (std::size_t k = 0; k < n; ++k) packed[f * n + k] = target_data[f * nsites + (*sites)[k]];
        },
        std::string(call) + " pack");
    tessera::submit(stream, {}, [&](tessera::Stream& s) {
      target.copy_async(staging.data(), packed, packed_bytes, CopyDirection::device_to_host, s);
    });
    stream.synchronize();
    for (std::size_t f = 0; f < nfields; ++f)
      for (std::size_t k = 0; k < n; ++k) host_data[f * nsites + (*sites)[k]] = staging[f * n + k];
  } else {
    for (std::size_t f = 0; f < nfields; ++f)
      for (std::size_t k = 0; k < n; ++k) staging[f * n + k] = host_data[f * nsites + (*sites)[k]];
    tessera::submit(stream, {}, [&](tessera::Stream& s) {
      target.copy_async(packed, staging.data(), packed_bytes, CopyDirection::host_to_device, s);
    });
    submit_host(
        stream,
        [=] {
          for (std::size_t f = 0; f < nfields; ++f)
            for (std::size_t k = 0; k < n; ++k) target_data[f * nsites + (*sites)[k]] = packed[f * n + k];
        },
        std::string(call) + " unpack");
    stream.synchronize();
  }
}

}  // namespace

extern "C" {

tdpStatus tdp_check_masked_copy(const char* call, const double* target_data, const double* data, size_t nsites,
                                size_t nfields, const char* site_mask, size_t mask_length) {
  const char* name = call ? call : "masked copy";
  return guarded(name, [&] { check_arguments(name, target_data, data, nsites, nfields, site_mask, mask_length); });
}

tdpStatus tdp_report_cuda_error(const char* call, const char* error_name, const char* error_string) {
  const char* name = call ? call : "targetDP";
  return guarded(name, [&] {
    throw Failure(tdpErrorTarget, fmt::format("{} on {}: CUDA error {}: {}", name, tdp_target_name(),
                                              error_name ? error_name : "?", error_string ? error_string : "?"));
  });
}

tdpStatus tdp_copy_to_target_masked(double* target_data, const double* data, size_t nsites, size_t nfields,
                                    const char* site_mask, size_t mask_length) {
  return guarded("copyToTargetMasked", [&] {
    check_arguments("copyToTargetMasked", target_data, data, nsites, nfields, site_mask, mask_length);
    masked_copy(Way::to_target, target_data, const_cast<double*>(data), nsites, nfields, site_mask,
                "copyToTargetMasked");
  });
}

tdpStatus tdp_copy_from_target_masked(double* data, const double* target_data, size_t nsites, size_t nfields,
                                      const char* site_mask, size_t mask_length) {
  return guarded("copyFromTargetMasked", [&] {
    check_arguments("copyFromTargetMasked", target_data, data, nsites, nfields, site_mask, mask_length);
    masked_copy(Way::from_target, const_cast<double*>(target_data), data, nsites, nfields, site_mask,
                "copyFromTargetMasked");
  });
}

}  // extern "C"

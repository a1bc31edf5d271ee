// MLP training steps (apps/flow-mlp: 784 -> hidden -> 10, batches of 100) as its dataflows,
// fused and unfused, against a hand-written loop of the same OpenBLAS calls and the same
// element-wise loops over arrays allocated once, in interleaved rounds of the same run.
//
// Threading: the flows' products are cut into row blocks that tessera's workers run, one
// single-threaded OpenBLAS call each (src/flow/blas.cpp), and their element-wise kernels are
// parallel loops on the same workers. The baseline does exactly that, on the same executor, so the
// ratios measure what the dataflow runtime adds (firings, a new array per result, routing the
// parameters round the cycle) and what fusion saves, not two ways of parallelising a GEMM.
// OpenBLAS's own thread pool would be such a second way, and its threads, spinning after each
// call, would share the cores with tessera's workers in the next round (quiet_baseline_threads.hpp).
#include "suites.hpp"

#if defined(TESSERA_BENCH_FLOW_MLP)
#include "flow-mlp/mlp.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/sched/executor.hpp>

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#endif

namespace flow_bench {

#if defined(TESSERA_BENCH_FLOW_MLP)
namespace {

namespace fm = flow_mlp;
using tessera::bench::Record;

/// Random pixels and labels: an epoch's time does not depend on what the images show.
fm::Dataset synthetic_images(std::size_t count, std::size_t pixels) {
  fm::Dataset d;
  d.rows = 1;
  d.cols = pixels;
  d.pixels.resize(count * pixels);
  d.labels.resize(count);
  std::uint64_t s = 0x2545F4914F6CDD1Dull;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  for (auto& p : d.pixels) p = static_cast<std::uint8_t>(next() >> 56);
  for (auto& l : d.labels) l = static_cast<std::uint8_t>(next() % fm::fashion_classes);
  return d;
}

struct HostBatch {
  std::vector<float> images;  // rows x (inputs + 1), the same values as the flows' batches
  std::vector<std::int32_t> labels;
};

/// The training step of the flows as plain code: the same products (with the operands the fused
/// flow reads transposed passed as transposed to OpenBLAS), the same row blocks on the same
/// workers, the activation applied to each block of the hidden product as the fused epilogue is,
/// and the weights updated in place.
class BlasLoop {
 public:
  BlasLoop(const fm::MlpConfig& c, const fm::Parameters& p, std::size_t batch, tessera::Executor& executor)
      : c_(c), executor_(executor), w1_(p.w1), w2_(p.w2), b2_(p.b2) {
    // Asked only when needed: tessera leaves OpenBLAS at one thread with its pool shut, and
    // setting the number starts the pool again (its threads spin for about 0.1 s).
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
    const std::size_t n1 = c.inputs + 1, h = c.hidden, k = c.classes;
    a_.resize(batch * h);
    logits_.resize(batch * k);
    g_.resize(batch * k);
    log_likelihood_.resize(batch);
    gw2_.resize(h * k);
    gb2_.resize(k);
    error_.resize(batch * h);
    gw1_.resize(n1 * h);
  }

  /// One SGD step per batch; returns the mean of the batches' mean cross-entropies.
  double train(const std::vector<HostBatch>& batches) {
    double loss = 0;
    for (const HostBatch& b : batches) loss += step(b);
    return loss / static_cast<double>(batches.size());
  }
  const std::vector<float>& w1() const { return w1_; }

 private:
  double step(const HostBatch& batch) {
    const std::size_t rows = batch.labels.size(), n1 = c_.inputs + 1, h = c_.hidden, k = c_.classes;
    const float* x = batch.images.data();
    const fm::Activate activate{c_.activation};
    const fm::ActivationBackward backward{c_.activation};
    float* a = a_.data();
    // Forward.
    gemm(false, false, rows, h, n1, x, w1_.data(), a, [activate](float* block, std::size_t count) {
      for (std::size_t i = 0; i < count; ++i) block[i] = activate(block[i]);
    });
    gemm(false, false, rows, k, h, a, w2_.data(), logits_.data());
    softmax_cross_entropy(batch.labels.data(), rows);
    float loss_sum = 0;
    for (std::size_t r = 0; r < rows; ++r) loss_sum += -log_likelihood_[r];
    // Backward.
    float* g = g_.data();
    gemm(true, false, h, k, rows, a, g, gw2_.data());
    float* gb2 = gb2_.data();
    executor_.parallel_for(0, k, [g, gb2, rows, k](std::size_t j) {
      float s = 0;
      for (std::size_t r = 0; r < rows; ++r) s += g[r * k + j];
      gb2[j] = s;
    });
    float* e = error_.data();
    gemm(false, true, rows, h, k, g, w2_.data(), e);
    executor_.parallel_for(0, rows * h, [e, a, backward](std::size_t i) { e[i] = backward(e[i], a[i]); });
    gemm(true, false, n1, h, rows, x, e, gw1_.data());
    // Updates.
    update(w1_, gw1_);
    update(w2_, gw2_);
    update(b2_, gb2_);
    return static_cast<double>(loss_sum) / static_cast<double>(rows);
  }

  void softmax_cross_entropy(const std::int32_t* labels, std::size_t rows) {
    const std::size_t k = c_.classes;
    const float* z = logits_.data();
    const float* b = b2_.data();
    float* g = g_.data();
    float* ll = log_likelihood_.data();
    const float scale = 1.0f / static_cast<float>(rows);
    executor_.parallel_for(0, rows, [=](std::size_t r) {
      const float* zr = z + r * k;
      float top = zr[0] + b[0];
      for (std::size_t j = 1; j < k; ++j) top = std::max(top, zr[j] + b[j]);
      float total = 0;
      for (std::size_t j = 0; j < k; ++j) total += std::exp(zr[j] + b[j] - top);
      const float inverse = 1.0f / total;
      const auto label = static_cast<std::size_t>(labels[r]);
      for (std::size_t j = 0; j < k; ++j)
        g[r * k + j] = (std::exp(zr[j] + b[j] - top) * inverse - (j == label ? 1.0f : 0.0f)) * scale;
      ll[r] = zr[label] + b[label] - top - std::log(total);
    });
  }

  void update(std::vector<float>& w, const std::vector<float>& gradient) {
    float* pw = w.data();
    const float* pg = gradient.data();
    const fm::SgdStep step{c_.learning_rate};
    executor_.parallel_for(0, w.size(), [pw, pg, step](std::size_t i) { pw[i] = step(pw[i], pg[i]); });
  }

  // c[m x n] = op(a) op(b), in the row blocks src/flow/blas.cpp cuts, with `epilogue` on each block.
  template <typename Epilogue = std::nullptr_t>
  void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
            Epilogue epilogue = nullptr) {
    const std::size_t lda = ta ? m : k, ldb = tb ? k : n;
    const std::size_t workers = std::max<std::size_t>(1, executor_.num_workers());
    std::size_t rows = std::max<std::size_t>(1, (m + 4 * workers - 1) / (4 * workers));
    if (n * k * m < (std::size_t{1} << 18)) rows = m;
    const std::size_t blocks = (m + rows - 1) / rows;
    executor_.parallel_for(
        0, blocks,
        [&](std::size_t block) {
          const std::size_t i0 = block * rows, i1 = std::min(m, i0 + rows);
          cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                      static_cast<int>(i1 - i0), static_cast<int>(n), static_cast<int>(k), 1.0f,
                      ta ? a + i0 : a + i0 * lda, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c + i0 * n,
                      static_cast<int>(n));
          if constexpr (!std::is_same_v<Epilogue, std::nullptr_t>) epilogue(c + i0 * n, (i1 - i0) * n);
        },
        1);
  }

  fm::MlpConfig c_;
  tessera::Executor& executor_;
  std::vector<float> w1_, w2_, b2_;
  std::vector<float> a_, logits_, g_, log_likelihood_, gw2_, gb2_, error_, gw1_;
};

/// Runs the baseline's steps on one of the executor's workers while the caller waits: its parallel
/// loops then share the work among the workers alone, as the flows' firings do, instead of the
/// workers and the calling thread, one thread more than the cores here.
class OnAWorker : public tessera::Job {
 public:
  OnAWorker(tessera::Executor& executor, std::function<void()> work)
      : Job(&OnAWorker::run_job), executor_(executor), work_(std::move(work)) {}
  void operator()() {
    done_ = false;
    executor_.schedule(*this);
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  static void run_job(Job& self) {
    auto& job = static_cast<OnAWorker&>(self);
    std::exception_ptr error;
    try {
      job.work_();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(job.mutex_);  // notified under the lock: the waiter may destroy the job next
    job.error_ = error;
    job.done_ = true;
    job.finished_.notify_one();
  }

  tessera::Executor& executor_;
  std::function<void()> work_;
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::exception_ptr error_;
};

double seconds(auto&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
  return d;
}

// Times `steps` training steps of batches of 100, `rounds` times for each variant, interleaved.
void training(tessera::bench::Report& report, std::size_t hidden, std::size_t steps, int rounds) {
  constexpr std::size_t batch = 100;
  const fm::MlpConfig config{.hidden = hidden, .learning_rate = 0.1f};
  const fm::Dataset data = synthetic_images(steps * batch, config.inputs);
  const auto order = fm::natural_order(data.size());
  auto devices = tessera::DeviceSet::select("host");
  fm::Mlp fused(devices, config, fm::MlpOptions{.fusion = true});
  fm::Mlp unfused(devices, config, fm::MlpOptions{.fusion = false});
  const auto fused_batches = fm::make_batches(fused.flow(), data, order, batch);
  const auto unfused_batches = fm::make_batches(unfused.flow(), data, order, batch);
  std::vector<HostBatch> host_batches;
  for (const fm::Batch& b : fused_batches) host_batches.push_back({b.images.to_vector(), b.labels.to_vector()});
  BlasLoop baseline(config, fm::initial_parameters(config), batch, fused.flow().executor());
  OnAWorker baseline_epoch(fused.flow().executor(), [&] { baseline.train(host_batches); });

  // The warm-up starts all three from the same weights: doing the same float operations, they end
  // at the same ones (mlp.cmake: no fused multiply-adds in this file).
  baseline_epoch();
  fused.train(fused_batches);
  unfused.train(unfused_batches);
  const std::string name = "mlp-h" + std::to_string(hidden);
  std::printf("%s: after %zu steps the flows' w1 is within %.1e (fused) and %.1e (unfused) of the loop's\n",
              name.c_str(), steps, max_difference(fused.parameters().w1, baseline.w1()),
              max_difference(unfused.parameters().w1, baseline.w1()));

  std::vector<double> t_loop, t_fused, t_unfused;
  const auto fused_before = fused.stats(), unfused_before = unfused.stats();
  for (int r = 0; r < rounds; ++r) {
    // Each round in another order, so that none is always first after another's work.
    for (int i = 0; i < 3; ++i) {
      switch ((r + i) % 3) {
        case 0:
          t_loop.push_back(seconds(baseline_epoch));
          break;
        case 1:
          t_fused.push_back(seconds([&] { fused.train(fused_batches); }));
          break;
        default:
          t_unfused.push_back(seconds([&] { unfused.train(unfused_batches); }));
      }
    }
  }
  const auto fused_after = fused.stats(), unfused_after = unfused.stats();
  const double timed_steps = static_cast<double>(rounds) * static_cast<double>(steps);
  std::printf("%s: per step %.1f firings and %.1f kernels fused, %.1f and %.1f unfused\n", name.c_str(),
              static_cast<double>(fused_after.firings - fused_before.firings) / timed_steps,
              static_cast<double>(fused_after.kernels - fused_before.kernels) / timed_steps,
              static_cast<double>(unfused_after.firings - unfused_before.firings) / timed_steps,
              static_cast<double>(unfused_after.kernels - unfused_before.kernels) / timed_steps);

  const double us = 1e6 / static_cast<double>(steps);  // a round's seconds to microseconds per step
  const double loop = median(t_loop) * us, with_fusion = median(t_fused) * us, without = median(t_unfused) * us;
  report.add(Record{name, "blas-loop", "step", loop, "us", "", 0, 0});
  report.add(Record{name, "flow-fused", "step", with_fusion, "us", "blas-loop", loop, 0});
  report.add(Record{name, "flow-unfused", "step", without, "us", "blas-loop", loop, 0});
  report.add(Record{name, "flow-fused", "step", with_fusion, "us", "flow-unfused", without, 0});
}

}  // namespace

void mlp(tessera::bench::Report& report, const Options& o) {
  // An epoch of Fashion-MNIST is 600 steps; 150 steps a round gives more, shorter rounds, whose
  // median resists other processes on the cores. The paper's figure 13 grows the hidden layer.
  const int rounds = o.quick ? 3 : 11;
  for (std::size_t hidden : o.quick ? std::vector<std::size_t>{128} : std::vector<std::size_t>{128, 512, 1024})
    training(report, hidden, o.quick ? 50 : 150, rounds);
}

#else

void mlp(tessera::bench::Report&, const Options&) {
  std::printf("mlp: skipped (needs apps/flow-mlp, which needs zlib, and OpenBLAS for the baseline)\n");
}

#endif

}  // namespace flow_bench

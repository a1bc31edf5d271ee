#pragma once
// Control-flow operations of the catalog (Alea Table 1): they route values and never compute
// on arrays, so they run on the host, and a value may be sent into an input they feed.
//
//   Merger<A, B>       first, second          -> output (std::tuple<A, B>)
//   Splitter<A, B>     input (tuple<A, B>)     -> first, second
//   Predicate<T>       input                   -> output (bool: the lambda's verdict)
//   Turnout<T>         input, control (bool)   -> first (control true), second (false)
//   Approximator<T>    input, feedback         -> iterate (into a cycle), output (converged)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "tessera/flow/context.hpp"
#include "tessera/flow/operation.hpp"

namespace tessera::flow {

namespace detail {
[[noreturn]] void throw_not_converged(const std::string& op, std::size_t iterations, double distance);
}

/// Joins one value from each input into a tuple (waits for all of them).
template <typename... Ts>
class Merger;

template <typename A, typename B>
class Merger<A, B> : public Operation {
 public:
  InputPort<A, Merger> first{*this, "first"};
  InputPort<B, Merger> second{*this, "second"};
  OutputPort<std::tuple<A, B>, Merger> output{*this, "output"};
  explicit Merger(std::string name = "merger") : Operation(std::move(name)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override { c.emit(output, std::tuple<A, B>(c.get(first), c.get(second))); }
};

template <typename A, typename B, typename C>
class Merger<A, B, C> : public Operation {
 public:
  InputPort<A, Merger> first{*this, "first"};
  InputPort<B, Merger> second{*this, "second"};
  InputPort<C, Merger> third{*this, "third"};
  OutputPort<std::tuple<A, B, C>, Merger> output{*this, "output"};
  explicit Merger(std::string name = "merger") : Operation(std::move(name)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override { c.emit(output, std::tuple<A, B, C>(c.get(first), c.get(second), c.get(third))); }
};

/// Sends each part of a tuple out of its own output.
template <typename... Ts>
class Splitter;

template <typename A, typename B>
class Splitter<A, B> : public Operation {
 public:
  InputPort<std::tuple<A, B>, Splitter> input{*this, "input"};
  OutputPort<A, Splitter> first{*this, "first"};
  OutputPort<B, Splitter> second{*this, "second"};
  explicit Splitter(std::string name = "splitter") : Operation(std::move(name)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override {
    const auto& t = c.get(input);
    c.emit(first, std::get<0>(t));
    c.emit(second, std::get<1>(t));
  }
};

template <typename A, typename B, typename C>
class Splitter<A, B, C> : public Operation {
 public:
  InputPort<std::tuple<A, B, C>, Splitter> input{*this, "input"};
  OutputPort<A, Splitter> first{*this, "first"};
  OutputPort<B, Splitter> second{*this, "second"};
  OutputPort<C, Splitter> third{*this, "third"};
  explicit Splitter(std::string name = "splitter") : Operation(std::move(name)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override {
    const auto& t = c.get(input);
    c.emit(first, std::get<0>(t));
    c.emit(second, std::get<1>(t));
    c.emit(third, std::get<2>(t));
  }
};

/// The verdict of `test(value)` for each value, to steer a Turnout.
template <typename T>
class Predicate : public Operation {
 public:
  InputPort<T, Predicate> input{*this, "input"};
  OutputPort<bool, Predicate> output{*this, "output"};
  Predicate(std::string name, std::function<bool(const T&)> test)
      : Operation(std::move(name)), test_(std::move(test)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override { c.emit(output, test_(c.get(input))); }

 private:
  std::function<bool(const T&)> test_;
};

/// Routes each value to `first` when its control value is true, else to `second` (a railway
/// turnout); waits for one of each.
template <typename T>
class Turnout : public Operation {
 public:
  InputPort<T, Turnout> input{*this, "input"};
  InputPort<bool, Turnout> control{*this, "control"};
  OutputPort<T, Turnout> first{*this, "first"};
  OutputPort<T, Turnout> second{*this, "second"};
  explicit Turnout(std::string name = "turnout") : Operation(std::move(name)) {}
  bool control_flow() const override { return true; }
  void fire(Context& c) override {
    if (c.get(control))
      c.emit(first, c.get(input));
    else
      c.emit(second, c.get(input));
  }
};

/// Fixed-point iteration (Alea figure 4): a value sent to `input` goes out of `iterate` into a
/// cycle; each value coming back on `feedback` is compared with the one before it, by
/// `distance(previous, next)`; at or below `threshold` it leaves on `output`, otherwise it goes
/// round again. Input sets iterate independently (each keeps its own previous value). At
/// `max_iterations` rounds a value either fails (AtLimit::fail: a tessera::Error naming the
/// operation and the last distance) or leaves on `output` as it is (AtLimit::emit; `stopped()`
/// counts those), for iterations that are meant to stop at a budget.
enum class AtLimit { fail, emit };

template <typename T>
class Approximator : public Operation {
 public:
  InputPort<T, Approximator> input{*this, "input"};
  InputPort<T, Approximator> feedback{*this, "feedback"};
  OutputPort<T, Approximator> iterate{*this, "iterate"};
  OutputPort<T, Approximator> output{*this, "output"};

  Approximator(std::string name, std::function<double(const T&, const T&)> distance, double threshold,
               std::size_t max_iterations = 100000, AtLimit at_limit = AtLimit::fail)
      : Operation(std::move(name)),
        distance_(std::move(distance)),
        threshold_(threshold),
        max_(max_iterations),
        at_limit_(at_limit) {}

  bool control_flow() const override { return true; }
  bool concurrent() const override { return false; }
  std::uint64_t ready(std::span<const std::size_t> queued) const override {
    if (queued[1] > 0) return 2;  // a value coming round first: it frees the cycle
    return queued[0] > 0 ? 1 : 0;
  }
  void fire(Context& c) override {
    const std::uint64_t set = c.input_set();
    if (c.has(input)) {
      const T& v = c.get(input);
      rounds_[set] = Round{v, 0};
      c.emit(iterate, v);
      return;
    }
    const T& next = c.get(feedback);
    auto it = rounds_.find(set);
    if (it == rounds_.end()) {  // a value that entered through the cycle itself: start its count
      rounds_[set] = Round{next, 0};
      c.emit(iterate, next);
      return;
    }
    Round& r = it->second;
    const double d = distance_(r.previous, next);
    last_distance_ = d;
    ++r.iterations;
    if (d <= threshold_) {
      iterations_ = r.iterations;
      rounds_.erase(it);
      c.emit(output, next);
      return;
    }
    if (r.iterations >= max_) {
      rounds_.erase(it);
      if (at_limit_ == AtLimit::fail) detail::throw_not_converged(name(), max_, d);
      ++stopped_;
      c.emit(output, next);
      return;
    }
    r.previous = next;
    c.emit(iterate, next);
  }
  /// Rounds the last converged input set took.
  std::size_t iterations() const noexcept { return iterations_; }
  double last_distance() const noexcept { return last_distance_; }
  /// Input sets that left at the limit without converging (AtLimit::emit).
  std::size_t stopped() const noexcept { return stopped_; }

 private:
  struct Round {
    T previous;
    std::size_t iterations;
  };
  std::function<double(const T&, const T&)> distance_;
  double threshold_;
  std::size_t max_;
  AtLimit at_limit_;
  std::size_t stopped_ = 0;
  std::unordered_map<std::uint64_t, Round> rounds_;
  std::size_t iterations_ = 0;
  double last_distance_ = std::numeric_limits<double>::infinity();
};

}  // namespace tessera::flow

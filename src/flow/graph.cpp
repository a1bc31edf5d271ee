// The graph side of a flow: operations and their ports, connections, receivers, removal, and
// fusion (Alea §3.4's five steps: the fusers come from connect(); the first run after a change
// finds the pairs they accept, builds the fused operations and rewires them in).

#include "engine.hpp"

#include <fmt/format.h>
#include <tessera/core/error.hpp>

#include <algorithm>

namespace tessera::flow {

namespace detail {

std::string PortBase::full_name() const { return owner_->name() + "." + name_; }

InputBase::InputBase(Operation& owner, std::type_index type, std::string name)
    : PortBase(&owner, owner.inputs_.size(), type, std::move(name)) {
  if (owner.inputs_.size() >= 64)
    throw Error(fmt::format("flow: operation '{}' declares more than 64 inputs", owner.name()));
  owner.inputs_.push_back(this);
}

OutputBase::OutputBase(Operation& owner, std::type_index type, std::string name)
    : PortBase(&owner, owner.outputs_.size(), type, std::move(name)) {
  owner.outputs_.push_back(this);
}

namespace {
Engine& engine_of(const PortBase& p) { return *p.owner().flow().engine_for_ports(); }
}  // namespace

void connect_ports(OutputBase& out, InputBase& in) { engine_of(out).connect(out, in); }
void add_receiver(OutputBase& out, Receiver r) { engine_of(out).add_receiver(out, std::move(r)); }
void add_fuser(OutputBase& out, InputBase& in, FuserFn f) { engine_of(out).add_fuser(out, in, f); }

class Rewire {
 public:
  static void move_input(InputBase& from, InputBase& to) {
    to.sources_ = from.sources_;
    for (OutputBase* s : from.sources_) std::replace(s->targets_.begin(), s->targets_.end(), &from, &to);
    from.sources_.clear();
    from.forward_ = &to;
  }
  static void move_output(OutputBase& from, OutputBase& to) {
    to.targets_ = from.targets_;
    to.receivers_ = from.receivers_;
    for (InputBase* t : from.targets_) std::replace(t->sources_.begin(), t->sources_.end(), &from, &to);
    from.targets_.clear();
    from.receivers_.clear();
    from.forward_ = &to;
  }
  static void disconnect(Operation& op) {
    for (std::size_t i = 0; i < op.num_inputs(); ++i) {
      InputBase& in = op.input(i);
      for (OutputBase* s : in.sources_) std::erase(s->targets_, &in);
      in.sources_.clear();
    }
    for (std::size_t i = 0; i < op.num_outputs(); ++i) {
      OutputBase& out = op.output(i);
      for (InputBase* t : out.targets_) std::erase(t->sources_, &out);
      out.targets_.clear();
    }
  }
  static OutputBase& resolve(OutputBase& o) {
    OutputBase* p = &o;
    while (p->forward_ != nullptr) p = p->forward_;
    return *p;
  }
  static InputBase& resolve(InputBase& i) {
    InputBase* p = &i;
    while (p->forward_ != nullptr) p = p->forward_;
    return *p;
  }
};

void Engine::check_idle(const char* what) const {
  bool queued = false;
  {
    std::lock_guard lock(graph_mutex_);
    queued = queued_values() != 0;
  }
  if (busy() || queued)
    throw Error(fmt::format("flow: cannot {} while values are in flight; call Flow::wait() first", what));
}

void Engine::adopt(std::unique_ptr<Operation> op) {
  std::lock_guard lock(graph_mutex_);
  if (op->flow_ != nullptr) throw Error(fmt::format("flow: operation '{}' already belongs to a flow", op->name()));
  op->flow_ = &flow;
  op->state_ = std::make_unique<OperationState>();
  ops_.push_back(std::move(op));
  structure_changed_ = true;
}

void Engine::connect(OutputBase& out, InputBase& in) {
  check_idle("connect ports");
  std::lock_guard lock(graph_mutex_);
  for (const PortBase* p : {static_cast<const PortBase*>(&out), static_cast<const PortBase*>(&in)}) {
    const Operation& op = p->owner();
    if (op.flow_ != &flow)
      throw Error(
          fmt::format("flow: cannot connect {}: its operation belongs to another flow or to none (add it with "
                      "Flow::add)",
                      p->full_name()));
    if (op.state_ == nullptr)
      throw Error(fmt::format("flow: cannot connect {}: the operation was removed", p->full_name()));
    if (op.state_->replaced)
      throw Error(
          fmt::format("flow: cannot connect {}: the operation was fused into another when the flow first ran; "
                      "connect everything before the first send, or set FlowOptions::fusion to false",
                      p->full_name()));
  }
  out.targets_.push_back(&in);
  in.sources_.push_back(&out);
  structure_changed_ = true;
}

void Engine::add_receiver(OutputBase& out, Receiver r) {
  check_idle("add an on_receive callback");
  std::lock_guard lock(graph_mutex_);
  if (out.owner().state_ == nullptr)
    throw Error(fmt::format("flow: cannot receive from {}: the operation was removed", out.full_name()));
  Rewire::resolve(out).receivers_.push_back(std::move(r));
}

void Engine::add_fuser(OutputBase& out, InputBase& in, FuserFn f) {
  std::lock_guard lock(graph_mutex_);
  candidates_.push_back({&out, &in, f});
  structure_changed_ = true;
}

void Engine::remove(Operation& op) {
  if (op.flow_ != &flow)
    throw Error(fmt::format("flow: cannot remove '{}': it belongs to another flow or none", op.name()));
  check_idle(fmt::format("remove operation '{}'", op.name()).c_str());
  std::lock_guard lock(graph_mutex_);
  Rewire::disconnect(op);
  std::erase_if(candidates_, [&](const FuseCandidate& c) { return &c.out->owner() == &op || &c.in->owner() == &op; });
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const auto& p) { return p.get() == &op; });
  if (it != ops_.end()) {
    retired_firings_ += op.state_->next_seq;
    ops_.erase(it);
  }
  structure_changed_ = true;
}

std::vector<const Operation*> Engine::operations() const {
  std::lock_guard lock(graph_mutex_);
  std::vector<const Operation*> out;
  for (const auto& op : ops_)
    if (!op->state_->replaced) out.push_back(op.get());
  return out;
}

void Engine::fuse() {
  std::lock_guard lock(graph_mutex_);
  structure_changed_ = false;
  if (!options.fusion) return;
  std::vector<std::unique_ptr<Operation>> made;
  for (const FuseCandidate& c : candidates_) {
    Operation& a = c.out->owner();
    Operation& b = c.in->owner();
    if (&a == &b || a.state_->replaced || b.state_->replaced) continue;
    // The producer's result must go nowhere else, and the consumer's input come from nowhere else.
    if (c.out->targets_.size() != 1 || c.out->targets_[0] != c.in || !c.out->receivers_.empty()) continue;
    if (c.in->sources_.size() != 1 || !c.in->queue_.empty()) continue;
    if (a.pinned_ != b.pinned_) continue;
    std::unique_ptr<Operation> fused = c.fuser(a, b, FuseSite{c.out->index(), c.in->index()});
    if (fused == nullptr) continue;
    // The fused operation's ports: the producer's inputs, then the consumer's other inputs; the
    // producer's other outputs, then the consumer's outputs, of the same types.
    std::vector<InputBase*> ins;
    for (InputBase* i : a.inputs_) ins.push_back(i);
    for (InputBase* i : b.inputs_)
      if (i != c.in) ins.push_back(i);
    std::vector<OutputBase*> outs;
    for (OutputBase* o : a.outputs_)
      if (o != c.out) outs.push_back(o);
    for (OutputBase* o : b.outputs_) outs.push_back(o);
    bool fits = fused->inputs_.size() == ins.size() && fused->outputs_.size() == outs.size();
    for (std::size_t i = 0; fits && i < ins.size(); ++i) fits = fused->inputs_[i]->type() == ins[i]->type();
    for (std::size_t i = 0; fits && i < outs.size(); ++i) fits = fused->outputs_[i]->type() == outs[i]->type();
    if (!fits)
      throw Error(
          fmt::format("flow: the fuser for '{}' -> '{}' made '{}', whose ports do not match theirs (inputs: the "
                      "producer's, then the consumer's others; outputs: the producer's others, then the "
                      "consumer's)",
                      a.name(), b.name(), fused->name()));
    fused->flow_ = &flow;
    fused->state_ = std::make_unique<OperationState>();
    fused->pinned_ = a.pinned_;
    for (std::size_t i = 0; i < ins.size(); ++i) Rewire::move_input(*ins[i], *fused->inputs_[i]);
    for (std::size_t i = 0; i < outs.size(); ++i) Rewire::move_output(*outs[i], *fused->outputs_[i]);
    std::erase(c.out->targets_, c.in);
    std::erase(c.in->sources_, c.out);
    c.in->fused_source_ = c.out;
    a.state_->replaced = true;
    b.state_->replaced = true;
    ++fused_;
    made.push_back(std::move(fused));
  }
  for (auto& op : made) ops_.push_back(std::move(op));
}

}  // namespace detail

// ---- Operation ----

Operation::Operation(std::string name) : name_(std::move(name)) {}
Operation::~Operation() = default;

std::uint64_t Operation::ready(std::span<const std::size_t> queued) const {
  if (queued.empty()) return 0;
  for (std::size_t q : queued)
    if (q == 0) return 0;
  return queued.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << queued.size()) - 1;
}

Flow& Operation::flow() const {
  if (flow_ == nullptr)
    throw Error(fmt::format("flow: operation '{}' belongs to no flow (add it with Flow::add)", name_));
  return *flow_;
}

// ---- Flow ----

Flow::Flow(DeviceSet& devices, FlowOptions options)
    : engine_(std::make_unique<detail::Engine>(*this, devices, std::move(options))) {}
Flow::~Flow() = default;

void Flow::adopt(std::unique_ptr<Operation> op) { engine_->adopt(std::move(op)); }
void Flow::remove(Operation& op) { engine_->remove(op); }
InputSet Flow::new_input_set() { return InputSet{engine_->new_input_set()}; }
void Flow::send_token(detail::InputBase& port, detail::Token token, std::uint64_t set) {
  engine_->send(port, std::move(token), set);
}
void Flow::wait() { engine_->wait(); }
std::size_t Flow::discard_pending() { return engine_->discard_pending(); }
bool Flow::busy() const noexcept { return engine_->busy(); }
FlowStats Flow::stats() const { return engine_->stats(); }
void Flow::fuse() { engine_->fuse(); }
std::vector<const Operation*> Flow::operations() const { return engine_->operations(); }
DeviceSet& Flow::devices() const noexcept { return engine_->devices; }
MemoryManager& Flow::memory() noexcept { return engine_->memory; }
Executor& Flow::executor() const noexcept { return engine_->executor; }
const FlowOptions& Flow::options() const noexcept { return engine_->options; }
detail::Engine* Flow::engine_for_ports() const noexcept { return engine_.get(); }

}  // namespace tessera::flow

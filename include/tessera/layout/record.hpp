#pragma once
// Record: the base of every user type with a polymorphic layout. A user type names its members
// once, as a storage descriptor, and its accessors once; the same type then works as an owned
// value and as a view into tensor memory in any layout:
//
//   template <typename T, typename S = tessera::Owned>
//   struct Particle : tessera::Record<S, tessera::Vector<T, 3>, tessera::Vector<T, 3>> {
//     TESSERA_RECORD(Particle)
//     TESSERA_FIELD(position, 0)
//     TESSERA_FIELD(velocity, 1)
//     TESSERA_HOST_DEVICE void update(T dt) { position() += velocity() * dt; }
//   };
//
//   Particle<float> p({0, 0, 0}, {1, 2, 3});        // owned
//   tensor.at(i, j, k) = p;                          // a view in the tensor's layout
//   p = tensor.at(i, j, k);                          // values assign across layouts
//
// Ripple gives its types these accessors through unions of accessor objects; reading a union
// member other than the last one written is undefined behaviour in C++. Here a view holds a
// SiteRef and get<I>() computes the member's address from the layout, so every access is an
// ordinary pointer or reference to a live scalar.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/layout/layout.hpp"
#include "tessera/layout/site_ref.hpp"
#include "tessera/layout/storage_descriptor.hpp"
#include "tessera/layout/vec.hpp"

namespace tessera {

namespace detail {
/// What an owned Record takes in its constructor for member M.
template <typename M>
struct MemberValue {
  using type = M;
};
template <typename T, std::size_t N>
struct MemberValue<Vector<T, N>> {
  using type = Vec<T, N>;
};

template <std::size_t I, typename M>
struct OwnedField {
  using scalar = typename MemberTraits<M>::scalar;
  scalar value[MemberTraits<M>::count]{};
};

template <typename Seq, typename... Ms>
struct OwnedFields;
template <std::size_t... Is, typename... Ms>
struct OwnedFields<std::index_sequence<Is...>, Ms...> : OwnedField<Is, Ms>... {};

template <std::size_t I, typename M>
TESSERA_HOST_DEVICE constexpr auto* owned_field(OwnedField<I, M>& f) noexcept {
  return f.value;
}
template <std::size_t I, typename M>
TESSERA_HOST_DEVICE constexpr const auto* owned_field(const OwnedField<I, M>& f) noexcept {
  return f.value;
}

/// Member I as the caller sees it: a reference for a scalar, a VecRef for a Vector.
template <typename Desc, std::size_t I, typename T>
TESSERA_HOST_DEVICE constexpr decltype(auto) member_ref(T* first, std::ptrdiff_t stride) noexcept {
  if constexpr (Desc::template is_vector<I>) {
    return VecRef<T, Desc::template count<I>>(first, stride);
  } else {
    return static_cast<T&>(*first);
  }
}

/// Where a view's member I starts, and how far apart its components are (in scalars).
template <typename Desc, std::size_t I, typename L>
TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr auto* view_member(const SiteRef& s,
                                                                     std::ptrdiff_t& stride) noexcept {
  using T = typename Desc::template scalar<I>;
  if constexpr (std::is_same_v<L, Contiguous>) {
    stride = 1;
    return reinterpret_cast<T*>(s.base + Desc::template aos_offset<I>);
  } else if constexpr (std::is_same_v<L, Strided>) {
    stride = s.pitch;
    return reinterpret_cast<T*>(s.base + s.pitch * static_cast<std::ptrdiff_t>(Desc::template soa_prefix<I>)) +
           s.index;
  } else {
    constexpr std::ptrdiff_t V = static_cast<std::ptrdiff_t>(L::width);
    stride = V;
    return reinterpret_cast<T*>(s.base + V * static_cast<std::ptrdiff_t>(Desc::template soa_prefix<I>)) +
           s.index;
  }
}

/// The state a Record keeps: values (Owned) or a SiteRef (View<L>).
template <typename S, typename Desc, typename... Ms>
class RecordStorage;

template <typename Desc, typename... Ms>
class RecordStorage<Owned, Desc, Ms...> {
 public:
  template <std::size_t I>
  TESSERA_HOST_DEVICE constexpr decltype(auto) get() noexcept {
    return member_ref<Desc, I>(owned_field<I>(fields_), 1);
  }
  template <std::size_t I>
  TESSERA_HOST_DEVICE constexpr decltype(auto) get() const noexcept {
    return member_ref<Desc, I>(owned_field<I>(fields_), 1);
  }

 private:
  OwnedFields<std::index_sequence_for<Ms...>, Ms...> fields_{};
};

template <typename L, typename Desc, typename... Ms>
class RecordStorage<View<L>, Desc, Ms...> {
 public:
  TESSERA_HOST_DEVICE constexpr explicit RecordStorage(SiteRef site) noexcept : site_(site) {}
  RecordStorage(const RecordStorage&) = default;
  /// Views assign values, not where they point.
  TESSERA_HOST_DEVICE constexpr RecordStorage& operator=(const RecordStorage& other) noexcept {
    copy_values(other);
    return *this;
  }

  // A const view still writes through, as a const std::span does.
  template <std::size_t I>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) get() const noexcept {
    std::ptrdiff_t stride = 0;
    auto* first = view_member<Desc, I, L>(site_, stride);
    return member_ref<Desc, I>(first, stride);
  }

  TESSERA_HOST_DEVICE constexpr SiteRef site() const noexcept { return site_; }

 protected:
  template <typename Other>
  TESSERA_HOST_DEVICE constexpr void copy_values(const Other& other) noexcept {
    copy_members(other, std::index_sequence_for<Ms...>{});
  }
  template <typename Other, std::size_t... Is>
  TESSERA_HOST_DEVICE constexpr void copy_members(const Other& other, std::index_sequence<Is...>) noexcept {
    (assign_member<Is>(get<Is>(), other.template get<Is>()), ...);
  }

 private:
  template <std::size_t I, typename Dst, typename Src>
  TESSERA_HOST_DEVICE static constexpr void assign_member(Dst&& dst, const Src& src) noexcept {
    dst = src;
  }
  SiteRef site_;
};

/// A view that only reads: members come back as const references (a VecRef of const scalars
/// for a Vector), and it cannot be assigned to.
template <typename L, typename Desc, typename... Ms>
class RecordStorage<ReadView<L>, Desc, Ms...> {
 public:
  TESSERA_HOST_DEVICE constexpr explicit RecordStorage(SiteRef site) noexcept : site_(site) {}
  RecordStorage(const RecordStorage&) = default;
  RecordStorage& operator=(const RecordStorage&) = delete;

  template <std::size_t I>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) get() const noexcept {
    std::ptrdiff_t stride = 0;
    const auto* first = view_member<Desc, I, L>(site_, stride);
    return member_ref<Desc, I>(first, stride);
  }

  TESSERA_HOST_DEVICE constexpr SiteRef site() const noexcept { return site_; }

 private:
  SiteRef site_;
};
}  // namespace detail

/// The base of a user type with polymorphic layout. `S` is Owned, View<L> or ReadView<L>; `Members...` are
/// scalars and Vector<T, N>s. get<I>() returns member I (a reference, or a VecRef for a
/// Vector); get<I, J>() returns component J of a Vector member.
template <typename S, typename... Members>
class Record : public detail::RecordStorage<S, StorageDescriptor<Members...>, Members...> {
  using Base = detail::RecordStorage<S, StorageDescriptor<Members...>, Members...>;

 public:
  using descriptor = StorageDescriptor<Members...>;
  using storage = S;
  using record_type = Record;

  Record() requires std::is_same_v<S, Owned> = default;

  /// An owned value from its members: `Particle<float> p({0, 0, 0}, {1, 2, 3});`
  TESSERA_HOST_DEVICE constexpr Record(const typename detail::MemberValue<Members>::type&... values) noexcept
    requires std::is_same_v<S, Owned>
  {
    set_members(std::index_sequence_for<Members...>{}, values...);
  }

  /// A view of one site (iterators and tensors make these).
  TESSERA_HOST_DEVICE constexpr explicit Record(SiteRef site) noexcept
    requires is_view<S>::value
      : Base(site) {}

  /// An owned copy of the values of another storage (a view into a tensor, say).
  template <typename S2>
    requires(std::is_same_v<S, Owned> && !std::is_same_v<S2, Owned>)
  TESSERA_HOST_DEVICE constexpr Record(const Record<S2, Members...>& other) noexcept {
    assign_from(other, std::index_sequence_for<Members...>{});
  }

  /// Copies the values of a Record with the same members in any storage.
  template <typename S2>
    requires(!std::is_same_v<S, S2> && !is_read_view<S>::value)
  TESSERA_HOST_DEVICE constexpr Record& operator=(const Record<S2, Members...>& other) noexcept {
    assign_from(other, std::index_sequence_for<Members...>{});
    return *this;
  }

  using Base::get;
  /// Component J of Vector member I.
  template <std::size_t I, std::size_t J>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) get() noexcept {
    static_assert(descriptor::template is_vector<I>, "get<I, J>() needs member I to be a tessera::Vector");
    static_assert(J < descriptor::template count<I>, "get<I, J>(): J is past the end of the Vector");
    return this->template get<I>()[J];
  }
  template <std::size_t I, std::size_t J>
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) get() const noexcept {
    static_assert(descriptor::template is_vector<I>, "get<I, J>() needs member I to be a tessera::Vector");
    static_assert(J < descriptor::template count<I>, "get<I, J>(): J is past the end of the Vector");
    return this->template get<I>()[J];
  }

 private:
  template <std::size_t... Is>
  TESSERA_HOST_DEVICE constexpr void set_members(std::index_sequence<Is...>,
                                                 const typename detail::MemberValue<Members>::type&... values) noexcept {
    (assign(this->template get<Is>(), values), ...);
  }
  template <typename S2, std::size_t... Is>
  TESSERA_HOST_DEVICE constexpr void assign_from(const Record<S2, Members...>& other,
                                                 std::index_sequence<Is...>) noexcept {
    (assign(this->template get<Is>(), other.template get<Is>()), ...);
  }
  template <typename Dst, typename Src>
  TESSERA_HOST_DEVICE static constexpr void assign(Dst&& dst, const Src& src) noexcept {
    dst = src;
  }
};

template <typename T>
concept RecordType = requires { typename T::record_type; typename T::descriptor; typename T::storage; };

/// Inherits Record's constructors and cross-layout assignment into a user type. Put it first in
/// the class body: `TESSERA_RECORD(Particle)`.
#define TESSERA_RECORD(Name)                                 \
  using tessera_record_base = typename Name::record_type;   \
  using tessera_record_base::tessera_record_base;            \
  using tessera_record_base::operator=;

/// A named accessor for member I (or component J of Vector member I):
/// `TESSERA_FIELD(velocity, 1)` gives `velocity()`, `TESSERA_FIELD(density, 0, 0)` gives
/// `density()` for component 0 of member 0.
#define TESSERA_FIELD(name, ...)                                                 \
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) name() {     \
    return this->template get<__VA_ARGS__>();                                    \
  }                                                                              \
  TESSERA_HOST_DEVICE TESSERA_FORCE_INLINE constexpr decltype(auto) name() const { \
    return this->template get<__VA_ARGS__>();                                    \
  }

namespace detail {
template <typename T, typename S2, typename = void>
struct HasWithStorage : std::false_type {};
template <typename T, typename S2>
struct HasWithStorage<T, S2, std::void_t<typename T::template with_storage<S2>>> : std::true_type {};

template <typename T, typename S2>
struct RebindLast;
template <template <typename...> class R, typename... A, typename S2>
struct RebindLast<R<A...>, S2> {
  template <std::size_t... Is>
  static auto make(std::index_sequence<Is...>)
      -> R<std::tuple_element_t<Is, std::tuple<A...>>..., S2>;
  using type = decltype(make(std::make_index_sequence<sizeof...(A) - 1>{}));
};
}  // namespace detail

/// The user type T with storage S2 instead of its own: Particle<float, View<Strided>> from
/// Particle<float>. Works when the storage is T's last template parameter and all of them are
/// types; otherwise T declares `template <class S2> using with_storage = MyType<..., S2>;`.
template <typename T, typename S2>
struct with_storage {
  using type = typename detail::RebindLast<T, S2>::type;
};
template <typename T, typename S2>
  requires detail::HasWithStorage<T, S2>::value
struct with_storage<T, S2> {
  using type = typename T::template with_storage<S2>;
};
template <typename T, typename S2>
using with_storage_t = typename with_storage<T, S2>::type;

}  // namespace tessera

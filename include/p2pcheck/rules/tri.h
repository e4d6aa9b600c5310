// Yes, no, or unknown: a fact p2pcheck could not read (ACS without root, no /proc/cpuinfo, no kernel
// config) leaves a rule undecided rather than guessed.
#pragma once

namespace p2pcheck {

// kUnknown first, so a value-initialised Tri says "not known" rather than "no".
enum class Tri { kUnknown, kNo, kYes };

constexpr Tri tri(bool value) { return value ? Tri::kYes : Tri::kNo; }

// Kleene logic: a known "no" (and) or "yes" (or) decides even when the other side is unknown.
constexpr Tri tri_and(Tri a, Tri b) {
  if (a == Tri::kNo || b == Tri::kNo) return Tri::kNo;
  if (a == Tri::kUnknown || b == Tri::kUnknown) return Tri::kUnknown;
  return Tri::kYes;
}

constexpr Tri tri_or(Tri a, Tri b) {
  if (a == Tri::kYes || b == Tri::kYes) return Tri::kYes;
  if (a == Tri::kUnknown || b == Tri::kUnknown) return Tri::kUnknown;
  return Tri::kNo;
}

}  // namespace p2pcheck

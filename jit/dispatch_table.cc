#include "jit/dispatch_table.h"

#include <span>

namespace pto::detail {

const CompiledClass* DispatchTable::Find(const CallShapes& shapes, int64_t* values) const {
  const Table* table = table_.load(std::memory_order_acquire);
  if (table == nullptr) return nullptr;
  for (const CompiledClass* e : table->entries) {
    if (!BindSymbols(*e->variant, shapes, values)) continue;
    if (jit::Matches(e->cls, std::span<const int64_t>(values, e->variant->symbols.size()),
                     e->variant->symbols)) {
      return e;
    }
  }
  return nullptr;
}

const CompiledClass* DispatchTable::Add(std::unique_ptr<CompiledClass> cls) {
  auto table = std::make_unique<Table>();
  if (const Table* old = table_.load(std::memory_order_relaxed)) *table = *old;
  if (cls->cls.generic) {
    table->entries.push_back(cls.get());
    ++table->generic;
  } else {
    table->entries.insert(table->entries.end() - table->generic, cls.get());
  }
  classes_.push_back(std::move(cls));
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
  return classes_.back().get();
}

int64_t DispatchTable::size() const {
  const Table* t = table_.load(std::memory_order_acquire);
  return t ? static_cast<int64_t>(t->entries.size()) : 0;
}

int64_t DispatchTable::generic_size() const {
  const Table* t = table_.load(std::memory_order_acquire);
  return t ? t->generic : 0;
}

}  // namespace pto::detail

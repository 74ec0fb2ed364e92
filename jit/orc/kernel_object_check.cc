#include "jit/orc/kernel_object_check.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/orc/llvm_status.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace pto::jit {
namespace {

using ELFT = llvm::object::ELF64LE;
using Shdr = ELFT::Shdr;
using Sym = ELFT::Sym;

absl::Status Refuse(std::string_view symbol, const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("kernel object for '", std::string(symbol), "' refused: ", why));
}

// Bytes a relocation of `type` patches; nullopt for the kinds kernels never use.
std::optional<uint64_t> FixupSize(uint32_t type) {
  switch (type) {
    case llvm::ELF::R_X86_64_PC32:
    case llvm::ELF::R_X86_64_PLT32:
    case llvm::ELF::R_X86_64_32:
    case llvm::ELF::R_X86_64_32S:
    case llvm::ELF::R_X86_64_GOTPCREL:
    case llvm::ELF::R_X86_64_GOTPCRELX:
    case llvm::ELF::R_X86_64_REX_GOTPCRELX:
      return 4;
    case llvm::ELF::R_X86_64_64:
    case llvm::ELF::R_X86_64_PC64:
      return 8;
    default:
      return std::nullopt;
  }
}

bool InitializerSection(const Shdr& sec, llvm::StringRef name) {
  return sec.sh_type == llvm::ELF::SHT_INIT_ARRAY || sec.sh_type == llvm::ELF::SHT_FINI_ARRAY ||
         sec.sh_type == llvm::ELF::SHT_PREINIT_ARRAY || name.starts_with(".init_array") ||
         name.starts_with(".fini_array") || name.starts_with(".preinit_array") ||
         name.starts_with(".ctors") || name.starts_with(".dtors") || name == ".init" ||
         name == ".fini";
}

// Sections: one symbol table, RELA relocations only, no initializers, thread-locals or
// writable code. Returns the symbol table.
absl::StatusOr<const Shdr*> CheckSections(const llvm::object::ELFFile<ELFT>& ef,
                                          ELFT::ShdrRange sections, std::string_view symbol) {
  const Shdr* symtab = nullptr;
  for (const Shdr& sec : sections) {
    llvm::Expected<llvm::StringRef> name = ef.getSectionName(sec);
    if (!name) return Refuse(symbol, ToStatus(name.takeError(), "section name").ToString());
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB) {
      if (symtab != nullptr) return Refuse(symbol, "more than one symbol table");
      symtab = &sec;
    }
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB_SHNDX) {
      return Refuse(symbol, "an extended section index table");
    }
    if (sec.sh_type == llvm::ELF::SHT_REL) return Refuse(symbol, "SHT_REL relocations");
    if (InitializerSection(sec, *name)) {
      return Refuse(symbol,
                    absl::StrCat("an initializer or finalizer section '", name->str(), "'"));
    }
    if ((sec.sh_flags & llvm::ELF::SHF_TLS) != 0) {
      return Refuse(symbol, absl::StrCat("a thread-local section '", name->str(), "'"));
    }
    if ((sec.sh_flags & llvm::ELF::SHF_WRITE) != 0 &&
        (sec.sh_flags & llvm::ELF::SHF_EXECINSTR) != 0) {
      return Refuse(symbol, absl::StrCat("a writable and executable section '", name->str(), "'"));
    }
  }
  if (symtab == nullptr) return Refuse(symbol, "no symbol table");
  return symtab;
}

// Relocations: known kinds, inside the allocated section they patch, naming a symbol.
absl::Status CheckRelocations(const llvm::object::ELFFile<ELFT>& ef, ELFT::ShdrRange sections,
                              const Shdr* symtab, uint64_t num_symbols, std::string_view symbol) {
  for (const Shdr& sec : sections) {
    if (sec.sh_type != llvm::ELF::SHT_RELA) continue;
    if (sec.sh_info >= sections.size()) return Refuse(symbol, "relocations of no section");
    const Shdr& target = sections[sec.sh_info];
    llvm::Expected<llvm::StringRef> target_name = ef.getSectionName(target);
    if (!target_name) {
      return Refuse(symbol, ToStatus(target_name.takeError(), "section name").ToString());
    }
    if ((target.sh_flags & llvm::ELF::SHF_ALLOC) == 0 || target.sh_type == llvm::ELF::SHT_NOBITS) {
      return Refuse(symbol, absl::StrCat("relocations of section '", target_name->str(),
                                         "', which is not loaded with contents"));
    }
    if (sec.sh_link >= sections.size() || &sections[sec.sh_link] != symtab) {
      return Refuse(symbol, "relocations against another symbol table");
    }
    llvm::Expected<ELFT::RelaRange> relas = ef.relas(sec);
    if (!relas) return Refuse(symbol, ToStatus(relas.takeError(), "relocations").ToString());
    for (const ELFT::Rela& r : *relas) {
      const uint32_t type = r.getType(false);
      const std::optional<uint64_t> size = FixupSize(type);
      if (!size.has_value()) {
        return Refuse(
            symbol,
            absl::StrCat("a relocation of type ",
                         llvm::object::getELFRelocationTypeName(llvm::ELF::EM_X86_64, type).str(),
                         " in '", target_name->str(), "'"));
      }
      if (r.r_offset > target.sh_size || target.sh_size - r.r_offset < *size) {
        return Refuse(symbol, absl::StrCat("a relocation at offset ", uint64_t{r.r_offset}, " of '",
                                           target_name->str(), "', whose size is ",
                                           uint64_t{target.sh_size}));
      }
      const uint32_t index = r.getSymbol(false);
      if (index == 0 || index >= num_symbols) {
        return Refuse(symbol, absl::StrCat("a relocation against symbol index ", index));
      }
    }
  }
  return absl::OkStatus();
}

// Whether a global definition of `symbol` is among `symbols` (NotFound if not).
absl::Status CheckDefinesKernel(ELFT::SymRange symbols, llvm::StringRef strtab,
                                std::string_view symbol) {
  for (size_t i = 1; i < symbols.size(); ++i) {
    const Sym& sym = symbols[i];
    llvm::Expected<llvm::StringRef> name = sym.getName(strtab);
    if (!name) return Refuse(symbol, ToStatus(name.takeError(), "symbol name").ToString());
    if (sym.st_shndx != llvm::ELF::SHN_UNDEF && sym.getBinding() != llvm::ELF::STB_LOCAL &&
        name->str() == symbol) {
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(
      absl::StrCat("kernel object does not define symbol '", std::string(symbol), "'"));
}

// Symbols: one global definition (the kernel, a function in code), undefined names from
// `allowed` only, no thread-local, indirect or common symbols.
absl::Status CheckSymbols(ELFT::ShdrRange sections, ELFT::SymRange symbols, llvm::StringRef strtab,
                          std::string_view symbol, const std::vector<std::string>& allowed) {
  int defined = 0;
  for (size_t i = 1; i < symbols.size(); ++i) {
    const Sym& sym = symbols[i];
    llvm::Expected<llvm::StringRef> name = sym.getName(strtab);
    if (!name) return Refuse(symbol, ToStatus(name.takeError(), "symbol name").ToString());
    const uint8_t type = sym.getType();
    if (type == llvm::ELF::STT_FILE) continue;
    if (type == llvm::ELF::STT_TLS || type == llvm::ELF::STT_GNU_IFUNC) {
      return Refuse(symbol, absl::StrCat("a thread-local or indirect symbol '", name->str(), "'"));
    }
    if (sym.st_shndx == llvm::ELF::SHN_COMMON) {
      return Refuse(symbol, absl::StrCat("a common symbol '", name->str(), "'"));
    }
    if (sym.st_shndx == llvm::ELF::SHN_UNDEF) {
      if (name->empty() || std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
        return Refuse(symbol, absl::StrCat("it references undefined symbol '", name->str(),
                                           "', which is not on the allow-list (",
                                           absl::StrJoin(allowed, ", "), ")"));
      }
      continue;
    }
    if (sym.st_shndx >= llvm::ELF::SHN_LORESERVE && sym.st_shndx != llvm::ELF::SHN_ABS) {
      return Refuse(symbol, absl::StrCat("symbol '", name->str(), "' in a reserved section"));
    }
    if (sym.getBinding() == llvm::ELF::STB_LOCAL) continue;
    // A global or weak definition.
    if (name->str() != symbol) {
      return Refuse(symbol, absl::StrCat("it defines global symbol '", name->str(),
                                         "' (a kernel object defines only its kernel)"));
    }
    const bool in_code = sym.st_shndx != llvm::ELF::SHN_ABS && sym.st_shndx < sections.size() &&
                         (sections[sym.st_shndx].sh_flags & llvm::ELF::SHF_EXECINSTR) != 0;
    if (type != llvm::ELF::STT_FUNC || !in_code) {
      return Refuse(symbol, "its kernel symbol is not a function in an executable section");
    }
    ++defined;
  }
  if (defined > 1) return Refuse(symbol, "it defines the kernel symbol more than once");
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckKernelObject(std::string_view object, std::string_view symbol,
                               const std::vector<std::string>& allowed) {
  llvm::MemoryBufferRef ref(llvm::StringRef(object.data(), object.size()), "pto-kernel");
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(ref);
  if (!file) {
    absl::Status s = ToStatus(file.takeError(), "reading kernel object");
    return absl::InvalidArgumentError(s.message());
  }
  const auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(file->get());
  if (elf == nullptr) return Refuse(symbol, "not a 64-bit little-endian ELF file");
  const llvm::object::ELFFile<ELFT>& ef = elf->getELFFile();
  if (ef.getHeader().e_type != llvm::ELF::ET_REL ||
      ef.getHeader().e_machine != llvm::ELF::EM_X86_64) {
    return Refuse(symbol, "not an x86-64 relocatable object");
  }
  llvm::Expected<ELFT::ShdrRange> sections = ef.sections();
  if (!sections) return Refuse(symbol, ToStatus(sections.takeError(), "sections").ToString());
  absl::StatusOr<const Shdr*> symtab = CheckSections(ef, *sections, symbol);
  if (!symtab.ok()) return symtab.status();
  llvm::Expected<ELFT::SymRange> symbols = ef.symbols(*symtab);
  if (!symbols) return Refuse(symbol, ToStatus(symbols.takeError(), "symbols").ToString());
  llvm::Expected<llvm::StringRef> strtab = ef.getStringTableForSymtab(**symtab, *sections);
  if (!strtab) return Refuse(symbol, ToStatus(strtab.takeError(), "string table").ToString());
  if (absl::Status s = CheckRelocations(ef, *sections, *symtab, symbols->size(), symbol); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDefinesKernel(*symbols, *strtab, symbol); !s.ok()) return s;
  return CheckSymbols(*sections, *symbols, *strtab, symbol, allowed);
}

}  // namespace pto::jit

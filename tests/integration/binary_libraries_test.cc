// The airlock binary is exec'd for every `airlock run`: what the dynamic
// loader has to map and relocate before main() is part of every job's start.
// It needs only the C library (the C++ runtime, libseccomp, OpenSSL and
// SQLite are linked statically; libarchive and libpq are dlopen'd by the few
// processes that use them). Linking libarchive once brought 13 libraries and
// about 5 ms to each start (docs/performance.md, "The binary's own start").
#include <elf.h>

#include <set>
#include <span>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "sys/file_io.h"

namespace airlock::testing {
namespace {

// The section headers of a 64-bit ELF file.
std::span<const Elf64_Shdr> section_headers(const std::string& elf) {
  EXPECT_GE(elf.size(), sizeof(Elf64_Ehdr));
  EXPECT_EQ(std::string_view(elf.data(), 4), std::string_view(ELFMAG, 4));
  auto header = reinterpret_cast<const Elf64_Ehdr*>(elf.data());
  return {reinterpret_cast<const Elf64_Shdr*>(elf.data() + header->e_shoff), header->e_shnum};
}

// The DT_NEEDED names of a 64-bit ELF file, read from its section headers.
std::set<std::string> needed_libraries(const std::string& elf) {
  std::set<std::string> names;
  auto sections = section_headers(elf);
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_DYNAMIC) continue;
    const char* strings = elf.data() + sections[section.sh_link].sh_offset;
    auto dyn = reinterpret_cast<const Elf64_Dyn*>(elf.data() + section.sh_offset);
    for (size_t k = 0; k < section.sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k)
      if (dyn[k].d_tag == DT_NEEDED) names.insert(strings + dyn[k].d_un.d_val);
  }
  return names;
}

// The size of the section named `name` in a 64-bit ELF file; 0 if it has none.
uint64_t section_size(const std::string& elf, std::string_view name) {
  auto sections = section_headers(elf);
  auto header = reinterpret_cast<const Elf64_Ehdr*>(elf.data());
  const char* names = elf.data() + sections[header->e_shstrndx].sh_offset;
  for (const Elf64_Shdr& section : sections)
    if (name == names + section.sh_name) return section.sh_size;
  return 0;
}

// The loader writes every page of .data.rel.ro at each start (the binary is
// position-independent), and each page costs a fault. It was 441 KB while
// OpenSSL's TLS and EVP code was linked in, and is about 70 KB since they are
// loaded on first use (base/openssl.h). One call to OpenSSL 3's SHA256() or
// to any EVP_* or SSL_* function from linked code brings them back.
TEST(BinaryLibraries, TheAirlockBinaryRelocatesLittleDataAtEachStart) {
  auto elf = sys::read_file(AIRLOCK_BINARY, size_t{512} << 20);
  ASSERT_TRUE(elf) << elf.error().message();
  uint64_t relro = section_size(*elf, ".data.rel.ro");
  EXPECT_GT(relro, 0u) << "no .data.rel.ro section read";
  EXPECT_GT(section_size(*elf, ".text"), relro) << "section names read wrong";
  EXPECT_LE(relro, 128u << 10) << AIRLOCK_BINARY << "'s .data.rel.ro has " << relro / 1024
                               << " KB: has OpenSSL's EVP or TLS code been linked in? "
                                  "Load it through base/openssl.h instead";
}

TEST(BinaryLibraries, TheAirlockBinaryNeedsOnlyTheCLibrary) {
  auto elf = sys::read_file(AIRLOCK_BINARY, size_t{512} << 20);
  ASSERT_TRUE(elf) << elf.error().message();
  std::set<std::string> needed = needed_libraries(*elf);
  ASSERT_FALSE(needed.empty()) << "no DT_NEEDED entry read: not a dynamic ELF file?";
  for (const std::string& name : needed)
    EXPECT_TRUE(name == "libc.so.6" || name == "libm.so.6" || name.starts_with("ld-linux"))
        << AIRLOCK_BINARY << " needs " << name
        << ": every airlock run would load it (and its dependencies) before main";
}

}  // namespace
}  // namespace airlock::testing

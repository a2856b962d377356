// image_size on real PNG/JPEG headers and on truncated and hostile bytes: a
// clear error every time, never a read past the buffer (run under ASan too).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "validate/image_size.h"

namespace airlock::validate {
namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string be16(uint32_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xFF)}; }
std::string be32(uint32_t v) { return be16(v >> 16) + be16(v & 0xFFFF); }

// The start of a PNG: signature and IHDR (CRC not checked), then IEND.
std::string png(uint32_t width, uint32_t height) {
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + "IHDR" + be32(width) + be32(height) +
         std::string("\x08\x06\x00\x00\x00", 5) + be32(0) + be32(0) + "IEND" + be32(0xAE426082);
}

// SOI, an APP0 (JFIF), a DHT (C4, must be skipped), a frame header `sof`, EOI.
std::string jpeg(uint8_t sof, uint32_t width, uint32_t height) {
  std::string s = from_hex("ffd8");
  s += from_hex("ffe0") + be16(16) + std::string("JFIF\0\x01\x01\x00\x00\x01\x00\x01\x00\x00", 14);
  s += from_hex("ffc4") + be16(5) + std::string("\x00\x01\x02", 3);
  s += std::string("\xff") + static_cast<char>(sof) + be16(11) + "\x08" + be16(height) +
       be16(width) + std::string("\x01\x01\x11\x00", 4);
  s += from_hex("ffd9");
  return s;
}

// A 1x1 grayscale JPEG written by libjpeg 6.2 (same sample as file_type_test).
const std::string kRealJpeg = from_hex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300100b0c0e0c0a10"
    "0e0d0e1211101318281a181616183123251d283a333d3c3933383740485c4e40"
    "4457453738506d51575f626768673e4d71797064785c656763ffc0000b080001"
    "000101011100ffc4001f0000010501010101010100000000000000000102030405"
    "060708090a0bffc400b5100002010303020403050504040000017d010203000411"
    "05122131410613516107227114328191a1082342b1c11552d1f0243362728209"
    "0a161718191a25262728292a3435363738393a434445464748494a5354555657"
    "58595a636465666768696a737475767778797a838485868788898a9293949596"
    "9798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2"
    "d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda0008"
    "010100003f00f40affd9");

const std::string kRealPng = from_hex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4"
    "890000000a49444154789c63000100000500010d0a2db40000000049454e44ae"
    "426082");

TEST(ImageSizeTest, Png) {
  auto s = image_size(png(700, 400));
  ASSERT_TRUE(s) << s.error().what;
  EXPECT_EQ(s->format, "png");
  EXPECT_EQ(s->width, 700u);
  EXPECT_EQ(s->height, 400u);
  auto real = image_size(kRealPng);
  ASSERT_TRUE(real);
  EXPECT_EQ(real->width, 1u);
  EXPECT_EQ(real->height, 1u);
}

TEST(ImageSizeTest, JpegEveryFrameHeaderKind) {
  for (int sof = 0xC0; sof <= 0xCF; ++sof) {
    if (sof == 0xC4 || sof == 0xC8 || sof == 0xCC) continue;
    auto s = image_size(jpeg(static_cast<uint8_t>(sof), 640, 480));
    ASSERT_TRUE(s) << std::hex << sof << ": " << s.error().what;
    EXPECT_EQ(s->format, "jpeg");
    EXPECT_EQ(s->width, 640u);
    EXPECT_EQ(s->height, 480u);
  }
  auto real = image_size(kRealJpeg);
  ASSERT_TRUE(real) << real.error().what;
  EXPECT_EQ(real->width, 1u);
  EXPECT_EQ(real->height, 1u);
}

TEST(ImageSizeTest, JpegSkipsFillBytesAndRestartMarkers) {
  std::string s = jpeg(0xC2, 3, 2);
  s.insert(2, from_hex("ffffffd0"));  // fill bytes, then RST0 (no length)
  auto size = image_size(s);
  ASSERT_TRUE(size) << size.error().what;
  EXPECT_EQ(size->width, 3u);
  EXPECT_EQ(size->height, 2u);
}

TEST(ImageSizeTest, JpegMarkersThatAreNotFrameHeaders) {
  // DHT (C4), JPG (C8) and DAC (CC) are skipped, so with no SOF after them the scan comes first.
  for (uint8_t m : {0xC4, 0xC8, 0xCC}) {
    std::string s = from_hex("ffd8") + "\xff" + static_cast<char>(m) + be16(11) + "\x08" +
                    be16(9) + be16(9) + std::string("\x01\x01\x11\x00", 4) + from_hex("ffda");
    EXPECT_EQ(image_size(s).error().what, "malformed JPEG: scan before any frame header (SOF)");
  }
  EXPECT_EQ(image_size(from_hex("ffd8ffd9")).error().what,
            "malformed JPEG: end of image before any frame header (SOF)");
}

TEST(ImageSizeTest, ClearErrors) {
  EXPECT_EQ(image_size("").error().what, "neither a PNG nor a JPEG");
  EXPECT_EQ(image_size("GIF89a....").error().what, "neither a PNG nor a JPEG");
  EXPECT_EQ(image_size(png(700, 400).substr(0, 20)).error().what,
            "truncated PNG: no complete IHDR chunk");
  std::string not_ihdr = png(1, 1);
  not_ihdr.replace(12, 4, "IDAT");
  EXPECT_EQ(image_size(not_ihdr).error().what,
            "malformed PNG: the first chunk is not a 13-byte IHDR");
  EXPECT_EQ(image_size(png(0, 5)).error().what, "malformed PNG: IHDR size 0x5 is out of range");
  EXPECT_EQ(image_size(png(0x80000000u, 5)).error().what,
            "malformed PNG: IHDR size 2147483648x5 is out of range");
  EXPECT_EQ(image_size(jpeg(0xC0, 5, 0)).error().what,
            "malformed JPEG: frame size 5x0 (a height set later by DNL is not supported)");
  EXPECT_EQ(image_size(from_hex("ffd8ff")).error().what, "truncated JPEG: no frame header (SOF) found");
  EXPECT_EQ(image_size(from_hex("ffd8ffe0")).error().what, "truncated JPEG: segment length cut off");
  EXPECT_EQ(image_size(from_hex("ffd8ffe0ffff00")).error().what,
            "truncated JPEG: segment runs past the end");
  EXPECT_EQ(image_size(from_hex("ffd8ffe00001")).error().what, "malformed JPEG: segment length 1");
  EXPECT_EQ(image_size(from_hex("ffd8ffc0000b08")).error().what,
            "truncated JPEG: frame header (SOF) cut off");
  EXPECT_EQ(image_size(from_hex("ffd8ffc00007080001000100")).error().what,
            "truncated JPEG: frame header (SOF) cut off");  // length 7 < 8
  EXPECT_EQ(image_size(from_hex("ffd8ff0000")).error().what,
            "malformed JPEG: unexpected marker at byte 3");
  EXPECT_EQ(image_size(from_hex("ffd8ffe0000200")).error().what,
            "malformed JPEG: expected a marker at byte 6");
}

// Every prefix of a valid file: an error (or the right size once the header
// is complete), never a crash or an out-of-bounds read. Each prefix is copied
// into a buffer of exactly its size so ASan sees any overread.
TEST(ImageSizeTest, EveryTruncationIsSafe) {
  for (const std::string& full : {png(700, 400), jpeg(0xC0, 640, 480), kRealJpeg, kRealPng}) {
    for (size_t n = 0; n < full.size(); ++n) {
      std::string prefix = full.substr(0, n);
      auto s = image_size(prefix);
      if (s) {
        EXPECT_GT(s->width, 0u);
        EXPECT_GT(s->height, 0u);
      } else {
        EXPECT_FALSE(s.error().what.empty());
      }
    }
  }
}

// Deterministic mutation fuzzing: flipped bytes, hostile lengths, 0xFF runs.
TEST(ImageSizeTest, MutatedBytesAreSafe) {
  std::mt19937 rng(12345);
  const std::string seeds[] = {png(700, 400), jpeg(0xC0, 640, 480), kRealJpeg,
                               from_hex("ffd8") + std::string(64, '\xff')};
  for (int round = 0; round < 20000; ++round) {
    std::string s = seeds[round % 4];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = 2 + rng() % (s.size() - 2);
      switch (rng() % 3) {
        case 0: s[at] = static_cast<char>(rng()); break;
        case 1: s[at] = '\xff'; break;
        case 2: s.resize(at); break;
      }
      if (s.size() <= 2) break;
    }
    s.shrink_to_fit();
    auto r = image_size(s);
    if (r) {
      EXPECT_GT(r->width, 0u);
    }
  }
}

}  // namespace
}  // namespace airlock::validate

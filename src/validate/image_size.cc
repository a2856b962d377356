#include "validate/image_size.h"

namespace airlock::validate {
namespace {

constexpr std::string_view kPngSignature = "\x89PNG\r\n\x1a\n";

uint32_t be16(std::string_view b, size_t at) {
  return (uint32_t{static_cast<uint8_t>(b[at])} << 8) | static_cast<uint8_t>(b[at + 1]);
}

uint32_t be32(std::string_view b, size_t at) {
  return (be16(b, at) << 16) | be16(b, at + 2);
}

Result<ImageSize> png_size(std::string_view b) {
  // signature(8) length(4) "IHDR"(4) width(4) height(4) ...
  if (b.size() < 8 + 8 + 13) return fail("truncated PNG: no complete IHDR chunk");
  if (be32(b, 8) != 13 || b.substr(12, 4) != "IHDR")
    return fail("malformed PNG: the first chunk is not a 13-byte IHDR");
  uint32_t width = be32(b, 16), height = be32(b, 20);
  if (width == 0 || height == 0 || width > 0x7fffffffu || height > 0x7fffffffu)
    return fail("malformed PNG: IHDR size " + std::to_string(width) + "x" +
                std::to_string(height) + " is out of range");
  return ImageSize{"png", width, height};
}

// The Orientation tag (0x0112) of IFD0 in an Exif APP1 payload ("Exif\0\0" then
// a TIFF header), or 0 when there is none or the Exif does not parse.
uint32_t exif_orientation(std::string_view seg) {
  if (!seg.starts_with(std::string_view("Exif\0\0", 6))) return 0;
  std::string_view t = seg.substr(6);
  if (t.size() < 8) return 0;
  bool little = t.substr(0, 2) == "II";
  if (!little && t.substr(0, 2) != "MM") return 0;
  auto u16 = [&](size_t at) -> uint32_t {
    uint32_t a = static_cast<uint8_t>(t[at]), b = static_cast<uint8_t>(t[at + 1]);
    return little ? a | (b << 8) : (a << 8) | b;
  };
  auto u32 = [&](size_t at) { return little ? u16(at) | (u16(at + 2) << 16) : (u16(at) << 16) | u16(at + 2); };
  if (u16(2) != 42) return 0;
  uint32_t ifd = u32(4);
  if (ifd > t.size() || t.size() - ifd < 2) return 0;
  uint32_t entries = u16(ifd);
  for (uint32_t i = 0; i < entries; ++i) {
    size_t at = ifd + 2 + size_t{12} * i;
    if (at + 12 > t.size()) return 0;
    if (u16(at) == 0x0112 && u16(at + 2) == 3) return u16(at + 8);  // SHORT, in the value field
  }
  return 0;
}

bool is_frame_header(uint8_t marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

Result<ImageSize> jpeg_size(std::string_view b) {
  size_t pos = 2;  // after SOI
  bool transposed = false;
  while (true) {
    if (pos >= b.size()) return fail("truncated JPEG: no frame header (SOF) found");
    if (static_cast<uint8_t>(b[pos]) != 0xFF)
      return fail("malformed JPEG: expected a marker at byte " + std::to_string(pos));
    while (pos < b.size() && static_cast<uint8_t>(b[pos]) == 0xFF) ++pos;  // fill bytes
    if (pos >= b.size()) return fail("truncated JPEG: no frame header (SOF) found");
    uint8_t marker = static_cast<uint8_t>(b[pos]);
    ++pos;
    if (marker == 0xD9 || marker == 0xDA)
      return fail(std::string("malformed JPEG: ") + (marker == 0xD9 ? "end of image" : "scan") +
                  " before any frame header (SOF)");
    if (marker == 0x00 || marker == 0xD8)
      return fail("malformed JPEG: unexpected marker at byte " + std::to_string(pos - 1));
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length field
    if (pos + 2 > b.size()) return fail("truncated JPEG: segment length cut off");
    uint32_t length = be16(b, pos);  // counts itself, not the marker
    if (length < 2) return fail("malformed JPEG: segment length " + std::to_string(length));
    if (is_frame_header(marker)) {
      // length(2) precision(1) height(2) width(2)
      if (length < 8 || pos + 7 > b.size())
        return fail("truncated JPEG: frame header (SOF) cut off");
      uint32_t height = be16(b, pos + 3), width = be16(b, pos + 5);
      if (width == 0 || height == 0)
        return fail("malformed JPEG: frame size " + std::to_string(width) + "x" +
                    std::to_string(height) + " (a height set later by DNL is not supported)");
      return ImageSize{"jpeg", width, height, transposed};
    }
    if (length > b.size() - pos) return fail("truncated JPEG: segment runs past the end");
    if (marker == 0xE1) {
      // Any Exif segment that turns it: the bounds then hold for both ways it may be shown.
      uint32_t orientation = exif_orientation(b.substr(pos + 2, length - 2));
      if (orientation >= 5 && orientation <= 8) transposed = true;
    }
    pos += length;
  }
}

}  // namespace

Result<ImageSize> image_size(std::string_view bytes) {
  if (bytes.starts_with(kPngSignature)) return png_size(bytes);
  if (bytes.size() >= 3 && static_cast<uint8_t>(bytes[0]) == 0xFF &&
      static_cast<uint8_t>(bytes[1]) == 0xD8 && static_cast<uint8_t>(bytes[2]) == 0xFF)
    return jpeg_size(bytes);
  return fail("neither a PNG nor a JPEG");
}

}  // namespace airlock::validate

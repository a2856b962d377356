// Width and height of a PNG or JPEG, read from the header bytes only. Every
// read is bounds-checked: a truncated or hostile file gives an Error, never
// a read past the buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::validate {

struct ImageSize {
  std::string format;  // "png" or "jpeg"
  uint32_t width = 0;
  uint32_t height = 0;
  // JPEG: an Exif orientation of 5 to 8 (APP1 before the frame header): a
  // viewer that honours it (every browser) shows the image a quarter turn
  // rotated, height x width; one that ignores it shows width x height.
  bool transposed = false;
};

// PNG: the signature, then IHDR as the first chunk (length 13). JPEG: SOI,
// then marker segments up to the first SOF0..SOF15 frame header (not DHT C4,
// JPG C8, DAC CC); a scan (SOS) or EOI before any frame header is an error;
// an Exif APP1 segment on the way gives the orientation (malformed Exif is
// ignored, as viewers ignore it).
Result<ImageSize> image_size(std::string_view bytes);

}  // namespace airlock::validate

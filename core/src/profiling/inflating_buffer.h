#pragma once
// A stream buffer that hands out a file's bytes inflated as they are asked for: gzip (one member or
// several one after another) or a zlib stream when the file starts like one, the plain bytes
// otherwise. Errors (damaged or truncated data, more than the limit) throw ModelError(source, ...)
// through whatever reads it, here nlohmann-json's parser.
#include <zlib.h>

#include <cstring>
#include <istream>
#include <streambuf>
#include <string>
#include <vector>

#include "trainscope/core/errors.h"
#include "trainscope/core/kineto_trace.h"

namespace ts {

inline constexpr size_t kInflateChunk = 1 << 18;  // bytes read and inflated at a time

class InflatingBuffer : public std::streambuf {
public:
    InflatingBuffer(std::istream& file, std::string source) : file_(file), source_(std::move(source)) {
        in_.resize(kInflateChunk);
        out_.resize(kInflateChunk);
        fill();
        const auto* b = reinterpret_cast<const unsigned char*>(in_.data());
        // gzip (1f 8b) or a zlib stream (78 xx, header checksum): JSON text never starts with either.
        compressed_ =
            avail_ >= 2 && ((b[0] == 0x1f && b[1] == 0x8b) || (b[0] == 0x78 && (b[0] * 256 + b[1]) % 31 == 0));
        if (compressed_) {
            std::memset(&z_, 0, sizeof z_);
            if (inflateInit2(&z_, 15 + 32) != Z_OK) throw ModelError(source_, "zlib could not start");
            zOpen_ = true;
        }
        setg(nullptr, nullptr, nullptr);
    }
    ~InflatingBuffer() override {
        if (zOpen_) inflateEnd(&z_);
    }
    InflatingBuffer(const InflatingBuffer&) = delete;
    InflatingBuffer& operator=(const InflatingBuffer&) = delete;

    bool compressed() const { return compressed_; }

protected:
    int_type underflow() override {
        if (gptr() && gptr() < egptr()) return traits_type::to_int_type(*gptr());
        size_t n = compressed_ ? inflateSome() : plainSome();
        if (n == 0) return traits_type::eof();
        produced_ += int64_t(n);
        if (produced_ > tracelimits::kMaxDecompressedBytes)
            throw ModelError(source_, "is larger than 16 GB of JSON; record fewer steps (torch.profiler's schedule)");
        setg(out_.data(), out_.data(), out_.data() + n);
        return traits_type::to_int_type(out_[0]);
    }

private:
    void fill() {
        file_.read(in_.data(), std::streamsize(in_.size()));
        avail_ = size_t(file_.gcount());
        pos_ = 0;
        if (file_.bad()) throw ModelError(source_, "could not be read");
    }
    size_t plainSome() {
        if (pos_ >= avail_) {
            fill();
            if (avail_ == 0) return 0;
        }
        size_t n = avail_ - pos_;
        std::memcpy(out_.data(), in_.data() + pos_, n);
        pos_ = avail_;
        return n;
    }
    size_t inflateSome() {
        while (true) {
            if (pos_ >= avail_) {
                fill();
                if (avail_ == 0) {
                    if (!ended_) throw ModelError(source_, "the gzip stream is truncated (the file ends inside it)");
                    return 0;
                }
                if (ended_) {  // another gzip member follows (concatenated files)
                    if (inflateReset(&z_) != Z_OK) throw ModelError(source_, "zlib could not restart");
                    ended_ = false;
                }
            }
            z_.next_in = reinterpret_cast<Bytef*>(in_.data() + pos_);
            z_.avail_in = uInt(avail_ - pos_);
            z_.next_out = reinterpret_cast<Bytef*>(out_.data());
            z_.avail_out = uInt(out_.size());
            int rc = inflate(&z_, Z_NO_FLUSH);
            pos_ = avail_ - z_.avail_in;
            size_t n = out_.size() - z_.avail_out;
            if (rc == Z_STREAM_END) {
                ended_ = true;
                if (pos_ < avail_) {  // a second member already in the buffer
                    if (inflateReset(&z_) != Z_OK) throw ModelError(source_, "zlib could not restart");
                    ended_ = false;
                }
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                throw ModelError(source_, std::string("the gzip data is damaged (zlib: ") +
                                              (z_.msg ? z_.msg : "error " + std::to_string(rc)) + ")");
            }
            if (n > 0) return n;
        }
    }

    std::istream& file_;
    std::string source_;
    std::vector<char> in_, out_;
    size_t avail_ = 0, pos_ = 0;
    z_stream z_{};
    bool zOpen_ = false, compressed_ = false, ended_ = false;
    int64_t produced_ = 0;
};

}  // namespace ts

// The parts of the kernel tracer every build has: the tensor-core name heuristic and the merging
// of traced launches into the kernels of one call.
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "profiling/kernel_tracer.h"

namespace ts::profiling {
namespace {

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

bool containsAny(std::string_view text, std::initializer_list<std::string_view> parts) {
    for (std::string_view part : parts)
        if (contains(text, part)) return true;
    return false;
}

// Lower-case words of a kernel name, split at anything but letters and digits.
std::vector<std::string> words(const std::string& name) {
    std::vector<std::string> result;
    std::string word;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            result.push_back(std::move(word));
            word.clear();
        }
    }
    if (!word.empty()) result.push_back(std::move(word));
    return result;
}

bool hasWord(const std::vector<std::string>& all, std::string_view word) {
    for (const std::string& w : all)
        if (w == word) return true;
    return false;
}

// cuBLAS/cuDNN/CUTLASS name their tensor-core kernels after the MMA instruction shape, one letter
// for the input type first: h884gemm (Volta), s1688gemm, h1688cudnn, i8816gemm (Turing),
// s16816gemm, i16832gemm (Ampere and later), s161616gemm (WMMA).
bool isMmaShapeWord(std::string_view word) {
    if (word.size() < 4 || (word[0] != 'h' && word[0] != 's' && word[0] != 'i')) return false;
    for (std::string_view shape : {"884", "1688", "16816", "16832", "8816", "8832", "161616"})
        if (word.substr(1).starts_with(shape)) return true;
    return false;
}

// "imma", "imma16832"... but not English words that begin so.
bool isImmaWord(std::string_view word) {
    return word == "imma" || (word.starts_with("imma") && std::isdigit(static_cast<unsigned char>(word[4])));
}

// nvjet_<types>_... is cuBLAS's kernel family on Hopper and Blackwell (wgmma/tcgen05). The type
// letters are A, compute, C: "sss" and "ddd" are plain FP32/FP64; "tst", "hsh", "bsb", "sss_tf32"
// and the FP8 variants use tensor cores.
bool isTensorCoreNvjet(const std::vector<std::string>& all) {
    bool afterNvjet = false;
    for (const std::string& w : all) {
        if (w == "nvjet") {
            afterNvjet = true;
            continue;
        }
        if (!afterNvjet) continue;
        if (w.starts_with("sm") && w.size() > 2 && std::isdigit(static_cast<unsigned char>(w[2]))) continue;
        const bool plainFloat = w.find_first_not_of("sd") == std::string::npos;
        return !plainFloat || hasWord(all, "tf32");
    }
    return true;
}

// PyTorch's memory-efficient attention (fmha_cutlassF/B_<type>_..._sm<arch>) uses tensor cores
// for FP16/BF16 from sm70 and for FP32 (as TF32x3) from sm80; its sm50 builds and FP32 below
// sm80 are SIMT.
bool isTensorCoreAttention(const std::vector<std::string>& all) {
    if (hasWord(all, "sm50")) return false;
    if (hasWord(all, "f32") && (hasWord(all, "sm70") || hasWord(all, "sm75"))) return false;
    return true;
}

}  // namespace

bool isTensorCoreKernel(const std::string& name) {
    std::string lower;
    lower.reserve(name.size());
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::vector<std::string> all = words(name);

    // Flash-attention helpers around the matrix kernels: reductions and conversions only.
    if (containsAny(lower, {"flash_bwd_dot_do_o", "flash_bwd_convert_d", "flash_bwd_clear", "splitkv_combine",
                            "flashattnbwdpreprocess", "flashattnbwdpostprocess", "flashattnfwdcombine"}))
        return false;
    // CUDA-core kernels named as such: CUTLASS's SIMT GEMMs, cuDNN/xmma FFMA variants.
    if (contains(lower, "simt") || hasWord(all, "ffma")) return false;

    // The MMA instruction or CUTLASS's tensor-op class written in the name.
    if (containsAny(lower, {"hmma", "gmma", "wmma", "tensorop", "tcgen05", "tmaumma"})) return true;
    for (const std::string& w : all)
        if (isImmaWord(w) || isMmaShapeWord(w)) return true;

    // cuBLAS/cuDNN xmma kernels (sm80_xmma_gemm_..., sm90_xmma_fprop_implicit_gemm_...): tensor
    // cores unless all types are plain FP32 ("f32f32_f32f32_f32"); "f32f32_tf32f32" computes in TF32.
    if (hasWord(all, "xmma")) {
        return containsAny(
            lower, {"tf32", "f16", "e4m3", "e5m2", "fp8", "i8i8", "int8", "warpgroupsize", "tensor16x8", "tensor8x8"});
    }
    if (hasWord(all, "nvjet")) return isTensorCoreNvjet(all);

    // Attention kernels: FlashAttention 2 and 3, PyTorch's memory-efficient attention, cuDNN SDPA.
    if (containsAny(lower, {"flash_fwd", "flash_bwd", "flashattnfwd", "flashattnbwd", "sdpa"})) return true;
    if (contains(lower, "fmha")) return isTensorCoreAttention(all);
    return false;
}

std::vector<KernelRecord> summarizeKernels(const std::vector<KernelActivity>& activities, int iterations) {
    if (iterations < 1)
        throw std::invalid_argument("summarizeKernels: iterations must be at least 1, got " +
                                    std::to_string(iterations));
    struct Group {
        KernelRecord record;
        int launches = 0;
        double totalUs = 0;
    };
    using Key = std::tuple<std::string, std::array<int, 3>, std::array<int, 3>>;
    std::vector<Group> groups;
    std::map<Key, std::size_t> groupOf;
    for (const KernelActivity& activity : activities) {
        const KernelRecord& kernel = activity.kernel;
        Key key{kernel.name,
                {kernel.grid[0], kernel.grid[1], kernel.grid[2]},
                {kernel.block[0], kernel.block[1], kernel.block[2]}};
        auto [it, inserted] = groupOf.try_emplace(std::move(key), groups.size());
        if (inserted) groups.push_back({kernel, 0, 0.0});
        Group& group = groups[it->second];
        group.launches += std::max(1, kernel.launches);
        group.totalUs += kernel.durationUs;
    }

    std::vector<KernelRecord> kernels;
    kernels.reserve(groups.size());
    for (Group& group : groups) {
        KernelRecord record = std::move(group.record);
        // A kernel of only some calls (an autotuning probe) still counts as one launch per call.
        record.launches = std::max(1, static_cast<int>(std::lround(static_cast<double>(group.launches) / iterations)));
        record.durationUs = group.totalUs / iterations;
        kernels.push_back(std::move(record));
    }
    return kernels;
}

}  // namespace ts::profiling

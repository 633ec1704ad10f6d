// ONNX's recurrent layers (LSTM, GRU, RNN) as ATen calls: the ONNX gate order converted to PyTorch's fused
// kernels, or a step-by-step loop for what those kernels lack (activations, clipping, peepholes).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "op_lowering_internal.h"
#include "op_lowering_math.h"
#include "trainscope/core/errors.h"

namespace ts::torchexec {
namespace {

// ---- recurrent layers ----

struct Recurrent {
    int64_t gates = 4, hidden = 0, dirs = 1;
    bool reverse = false, batchFirst = false;
    std::vector<std::string> activations;
    std::vector<double> alphas, betas;
};

at::Tensor activation(const OpCtx& c, const std::string& name, std::optional<double> alpha, std::optional<double> beta,
                      const at::Tensor& x) {
    if (name == "Sigmoid") return at::sigmoid(x);
    if (name == "Tanh") return at::tanh(x);
    if (name == "Relu") return at::relu(x);
    if (name == "LeakyRelu") return at::leaky_relu(x, alpha.value_or(0.01));
    if (name == "ThresholdedRelu") return at::threshold(x, alpha.value_or(1.0), 0);
    if (name == "ScaledTanh") return at::tanh(x * beta.value_or(1.0)) * alpha.value_or(1.0);
    if (name == "HardSigmoid") return at::clamp(x * alpha.value_or(0.2) + beta.value_or(0.5), 0, 1);
    if (name == "Elu") return at::elu(x, alpha.value_or(1.0));
    if (name == "Softsign") return x / (at::abs(x) + 1);
    if (name == "Softplus") return at::softplus(x);
    if (name == "Affine") return x * alpha.value_or(1.0) + beta.value_or(0.0);
    c.fail("unsupported recurrent activation '" + name + "'");
}

// Rows of a [gates*H, ...] tensor reordered from ONNX's gate order to PyTorch's.
at::Tensor reorderGates(const at::Tensor& m, const std::vector<int64_t>& order, int64_t hidden) {
    if (order.size() == 1) return m;
    std::vector<at::Tensor> parts;
    for (int64_t g : order) parts.push_back(m.narrow(0, g * hidden, hidden));
    return at::cat(parts, 0);
}

// PyTorch's fused LSTM/GRU/RNN: input [T, N, I], states [dirs, N, H]; returns output, h, c.
std::vector<at::Tensor> fusedRecurrent(const OpCtx& c, const Recurrent& r, at::Tensor x, const at::Tensor& w,
                                       const at::Tensor& rw, const at::Tensor& b, at::Tensor h0, at::Tensor c0) {
    const std::string& type = c.op.type;
    // ONNX LSTM gates i,o,f,c -> PyTorch i,f,g,o; GRU z,r,h -> r,z,n.
    const std::vector<int64_t> order = type == "LSTM"  ? std::vector<int64_t>{0, 2, 3, 1}
                                       : type == "GRU" ? std::vector<int64_t>{1, 0, 2}
                                                       : std::vector<int64_t>{0};
    const int64_t gh = r.gates * r.hidden;
    std::vector<at::Tensor> params;
    for (int64_t d = 0; d < r.dirs; ++d) {
        params.push_back(reorderGates(w[d], order, r.hidden));
        params.push_back(reorderGates(rw[d], order, r.hidden));
        if (b.defined()) {
            params.push_back(reorderGates(b[d].narrow(0, 0, gh), order, r.hidden));
            params.push_back(reorderGates(b[d].narrow(0, gh, gh), order, r.hidden));
        }
    }
    const bool train = c.options.training, bidirectional = r.dirs == 2;
    if (r.reverse) x = x.flip(0);
    std::vector<at::Tensor> out;
    if (type == "LSTM") {
        auto res = at::lstm(x, {h0, c0}, params, b.defined(), 1, 0.0, train, bidirectional, false);
        out = {std::get<0>(res), std::get<1>(res), std::get<2>(res)};
    } else if (type == "GRU") {
        auto res = at::gru(x, h0, params, b.defined(), 1, 0.0, train, bidirectional, false);
        out = {std::get<0>(res), std::get<1>(res)};
    } else {
        const bool relu = !r.activations.empty() && r.activations[0] == "Relu";
        auto res = relu ? at::rnn_relu(x, h0, params, b.defined(), 1, 0.0, train, bidirectional, false)
                        : at::rnn_tanh(x, h0, params, b.defined(), 1, 0.0, train, bidirectional, false);
        out = {std::get<0>(res), std::get<1>(res)};
    }
    if (r.reverse) out[0] = out[0].flip(0);
    return out;
}

// The ONNX equations step by step (any activations, clip, peepholes, per-sequence lengths,
// GRU with linear_before_reset=0). Output [T, N, dirs*H] and states [dirs, N, H].
std::vector<at::Tensor> loopRecurrent(const OpCtx& c, const Recurrent& r, const at::Tensor& x, const at::Tensor& w,
                                      const at::Tensor& rw, const at::Tensor& b, const at::Tensor& h0,
                                      const at::Tensor& c0, const at::Tensor& peep, const at::Tensor& lens) {
    const std::string& type = c.op.type;
    const int64_t T = x.size(0), H = r.hidden, gh = r.gates * H;
    const size_t perDir = type == "LSTM" ? 3 : type == "GRU" ? 2 : 1;
    const std::optional<double> clip = c.hasAttr("clip") ? std::optional<double>(c.attrFloat("clip", 0)) : std::nullopt;
    const bool inputForget = c.attrInt("input_forget", 0) != 0;
    const bool linearBeforeReset = c.attrInt("linear_before_reset", 0) != 0;
    std::vector<at::Tensor> ys, hs, cs;
    for (int64_t d = 0; d < r.dirs; ++d) {
        auto act = [&](size_t k, const at::Tensor& v) {
            const size_t i = static_cast<size_t>(d) * perDir + k;
            static const char* lstmDefaults[] = {"Sigmoid", "Tanh", "Tanh"};
            static const char* gruDefaults[] = {"Sigmoid", "Tanh"};
            std::string name = i < r.activations.size() ? r.activations[i]
                               : type == "LSTM"         ? lstmDefaults[k]
                               : type == "GRU"          ? gruDefaults[k]
                                                        : "Tanh";
            auto pick = [&](const std::vector<double>& list) {
                return i < list.size() ? std::optional<double>(list[i]) : std::nullopt;
            };
            return activation(c, name, pick(r.alphas), pick(r.betas), v);
        };
        auto clipped = [&](const at::Tensor& v) { return clip ? at::clamp(v, -*clip, *clip) : v; };
        at::Tensor wd = w[d], rd = rw[d];
        at::Tensor wb = b.defined() ? b[d].narrow(0, 0, gh) : at::zeros({gh}, x.options());
        at::Tensor rb = b.defined() ? b[d].narrow(0, gh, gh) : at::zeros({gh}, x.options());
        at::Tensor xw = at::matmul(x, wd.t()) + wb;  // [T, N, gates*H], every step's input projection
        at::Tensor h = h0[d], cell = c0.defined() ? c0[d] : at::Tensor();
        const bool backwards = r.reverse || d == 1;
        std::vector<at::Tensor> steps(static_cast<size_t>(T));
        for (int64_t k = 0; k < T; ++k) {
            const int64_t t = backwards ? T - 1 - k : k;
            at::Tensor gx = xw[t], hn, cn;
            if (type == "LSTM") {
                auto g = (gx + at::matmul(h, rd.t()) + rb).chunk(4, -1);  // i, o, f, c
                at::Tensor gi = g[0], go = g[1], gf = g[2];
                if (peep.defined()) {
                    gi = gi + peep[d].narrow(0, 0, H) * cell;
                    gf = gf + peep[d].narrow(0, 2 * H, H) * cell;
                }
                at::Tensor it = act(0, clipped(gi));
                at::Tensor ft = inputForget ? 1 - it : act(0, clipped(gf));
                cn = ft * cell + it * act(1, clipped(g[3]));
                if (peep.defined()) go = go + peep[d].narrow(0, H, H) * cn;
                hn = act(0, clipped(go)) * act(2, cn);
            } else if (type == "GRU") {
                auto gxs = gx.chunk(3, -1);  // z, r, h
                auto rs = rd.chunk(3, 0);
                auto rbs = rb.chunk(3, 0);
                at::Tensor z = act(0, clipped(gxs[0] + at::matmul(h, rs[0].t()) + rbs[0]));
                at::Tensor rr = act(0, clipped(gxs[1] + at::matmul(h, rs[1].t()) + rbs[1]));
                at::Tensor pre = linearBeforeReset ? gxs[2] + rr * (at::matmul(h, rs[2].t()) + rbs[2])
                                                   : gxs[2] + at::matmul(rr * h, rs[2].t()) + rbs[2];
                hn = (1 - z) * act(1, clipped(pre)) + z * h;
            } else {
                hn = act(0, clipped(gx + at::matmul(h, rd.t()) + rb));
            }
            at::Tensor y = hn;
            if (lens.defined()) {
                at::Tensor valid = lens.gt(t).unsqueeze(1);  // steps past a sequence's end keep its state
                hn = at::where(valid, hn, h);
                if (cn.defined()) cn = at::where(valid, cn, cell);
                y = at::where(valid, y, at::zeros_like(y));
            }
            steps[static_cast<size_t>(t)] = y;
            h = hn;
            cell = cn;
        }
        ys.push_back(at::stack(steps, 0));
        hs.push_back(h);
        if (cell.defined()) cs.push_back(cell);
    }
    std::vector<at::Tensor> out{at::cat(ys, -1), at::stack(hs, 0)};
    if (!cs.empty()) out.push_back(at::stack(cs, 0));
    return out;
}

Outputs runRecurrent(const OpCtx& c) {
    const std::string& type = c.op.type;
    Recurrent r;
    r.gates = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1;
    at::Tensor x = c.t(0), w = c.t(1), rw = c.t(2);
    at::Tensor b = c.has(3) ? c.t(3) : at::Tensor();
    r.batchFirst = c.attrInt("layout", 0) == 1;
    if (x.dim() != 3 || w.dim() != 3 || rw.dim() != 3) c.fail("X, W and R must have rank 3");
    if (r.batchFirst) x = x.transpose(0, 1);  // [T, N, I]
    const std::string direction = c.attrString("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        c.fail("direction must be forward, reverse or bidirectional");
    r.dirs = direction == "bidirectional" ? 2 : 1;
    r.reverse = direction == "reverse";
    r.hidden = c.hasAttr("hidden_size") ? c.attrInt("hidden_size", 0) : rw.size(2);
    r.activations = c.attrStrings("activations");
    r.alphas = c.attrFloats("activation_alpha");
    r.betas = c.attrFloats("activation_beta");
    const int64_t T = x.size(0), N = x.size(1);
    auto state = [&](size_t i) {
        if (!c.has(i)) return at::zeros({r.dirs, N, r.hidden}, x.options());
        at::Tensor s = c.t(i);
        return r.batchFirst ? s.transpose(0, 1) : s;
    };
    at::Tensor h0 = state(5);
    at::Tensor c0 = type == "LSTM" ? state(6) : at::Tensor();
    at::Tensor peep = type == "LSTM" && c.has(7) ? c.t(7) : at::Tensor();
    at::Tensor lens;
    if (c.has(4)) {
        bool full = true;
        for (int64_t len : c.ints(4)) full &= len == T;
        if (!full) lens = c.t(4).to(at::kLong);
    }
    // PyTorch's kernels: default activations, no clip or peepholes, full sequences, and for GRU
    // the reset gate applied after the recurrent product (linear_before_reset=1).
    std::vector<std::string> defaults = type == "LSTM"  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                        : type == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                        : std::vector<std::string>{"Tanh"};
    bool defaultActivations = r.activations.empty();
    if (!defaultActivations) {
        std::vector<std::string> expected;
        for (int64_t d = 0; d < r.dirs; ++d) expected.insert(expected.end(), defaults.begin(), defaults.end());
        std::vector<std::string> relu(static_cast<size_t>(r.dirs), "Relu");
        defaultActivations = r.activations == expected || (type == "RNN" && r.activations == relu);
    }
    const bool fused = defaultActivations && !c.hasAttr("clip") && !peep.defined() && !lens.defined() &&
                       c.attrInt("input_forget", 0) == 0 && (type != "GRU" || c.attrInt("linear_before_reset", 0) != 0);
    std::vector<at::Tensor> res =
        fused ? fusedRecurrent(c, r, x, w, rw, b, h0, c0) : loopRecurrent(c, r, x, w, rw, b, h0, c0, peep, lens);
    at::Tensor y = res[0].reshape({T, N, r.dirs, r.hidden});
    Outputs out;
    out.push_back(r.batchFirst ? y.permute({1, 0, 2, 3}) : y.permute({0, 2, 1, 3}));
    for (size_t i = 1; i < res.size(); ++i) out.push_back(r.batchFirst ? res[i].transpose(0, 1) : res[i]);
    return out;
}

}  // namespace

void addRecurrentLowerings(std::vector<LoweringEntry>& t) {
    for (const char* type : {"LSTM", "GRU", "RNN"}) t.push_back({type, runRecurrent});
}

}  // namespace ts::torchexec

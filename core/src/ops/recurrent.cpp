// Recurrent layers (ONNX opset 11-17): LSTM, GRU, RNN.
//
// Layouts: X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1); W [dirs, gates*H, input],
// R [dirs, gates*H, H], B [dirs, 2*gates*H]. Outputs Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]),
// Y_h and Y_c [dirs, batch, H] (layout 1: [batch, dirs, H]).
#include "ops/registry.h"

namespace ts::ops {
namespace {

struct RecurrentKind {
    const char* type;
    int64_t gates;
    // Elementwise FLOPs per hidden unit per step after the GEMMs: gate activations and state updates.
    double forwardPointwise;
    int64_t maxInputs;
};

// LSTM: 3 sigmoids (4 each) + 2 tanh + c = f*c + i*g (3) + h = o*tanh(c) (1).
// GRU: 2 sigmoids + tanh + reset product (1) + h = (1-z)*n + z*h (3).  RNN: one tanh.
const RecurrentKind kKinds[] = {{"LSTM", 4, 18, 8}, {"GRU", 3, 13, 6}, {"RNN", 1, 1, 6}};

const RecurrentKind& kindOf(const std::string& type) {
    for (const RecurrentKind& k : kKinds)
        if (type == k.type) return k;
    throw ShapeError("no recurrent entry for " + type);
}

int64_t directions(const Operation& op) {
    const std::string dir = op.attrString("direction", "forward");
    if (dir == "forward" || dir == "reverse") return 1;
    if (dir == "bidirectional") return 2;
    throw ShapeError(op.type + " direction must be forward, reverse or bidirectional, got '" + dir + "'");
}

void expectShape(const Operation& op, const char* what, const Shape& got, const Shape& want) {
    if (got != want)
        throw ShapeError(op.type + " " + what + " " + shapeStr(got) + " must have shape " + shapeStr(want));
}

void inferRecurrent(InferCtx& c) {
    const Operation& op = c.op();
    const RecurrentKind& kind = kindOf(op.type);
    c.expectInputs(3, static_cast<int>(kind.maxInputs));
    const Value& x = c.in(0);
    const Value& w = c.in(1);
    const Value& r = c.in(2);
    if (x.shape.size() != 3) throw ShapeError(op.type + " expects a rank-3 input X, got " + shapeStr(x.shape));
    const int64_t layout = op.attrInt("layout", 0);
    if (layout != 0 && layout != 1) throw ShapeError(op.type + " layout must be 0 or 1");
    const Dim seq = layout == 0 ? x.shape[0] : x.shape[1];
    const Dim batch = layout == 0 ? x.shape[1] : x.shape[0];
    const Dim& inputSize = x.shape[2];
    const Dim dirs(directions(op));
    if (w.shape.size() != 3 || r.shape.size() != 3)
        throw ShapeError(op.type + " W " + shapeStr(w.shape) + " and R " + shapeStr(r.shape) + " must be rank 3");
    Dim hidden;
    if (op.hasAttr("hidden_size")) {
        const int64_t h = op.attrInt("hidden_size", 0);
        if (h <= 0) throw ShapeError(op.type + " hidden_size must be positive, got " + std::to_string(h));
        hidden = Dim(h);
    } else {
        hidden = r.shape[2];  // R is [dirs, gates*H, H]
    }
    const Dim gatesH = Dim(kind.gates) * hidden;
    expectShape(op, "W", w.shape, {dirs, gatesH, inputSize});
    expectShape(op, "R", r.shape, {dirs, gatesH, hidden});
    if (c.hasInput(3)) expectShape(op, "B", c.in(3).shape, {dirs, Dim(2) * gatesH});
    if (c.hasInput(4)) expectShape(op, "sequence_lens", c.in(4).shape, {batch});
    const Shape state = layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
    if (c.hasInput(5)) expectShape(op, "initial_h", c.in(5).shape, state);
    if (op.type == "LSTM") {
        if (c.hasInput(6)) expectShape(op, "initial_c", c.in(6).shape, state);
        if (c.hasInput(7)) expectShape(op, "P", c.in(7).shape, {dirs, Dim(3) * hidden});
    }
    const size_t maxOutputs = op.type == "LSTM" ? 3 : 2;
    if (c.numOutputs() > maxOutputs)
        throw ShapeError(op.type + " has at most " + std::to_string(maxOutputs) + " outputs");
    const Shape y = layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
    // Omitted outputs are simply absent from the operation's output list or have an empty name upstream.
    if (c.numOutputs() > 0) c.setOutput(0, x.dtype, y);
    for (size_t i = 1; i < c.numOutputs(); ++i) c.setOutput(i, x.dtype, state);
}

struct RecurrentSizes {
    double seq, batch, input, hidden, dirs, gatesH;
};

RecurrentSizes sizesOf(const CostCtx& c) {
    auto x = c.inShape(0);
    auto r = c.inShape(2);
    const bool batchFirst = c.op().attrInt("layout", 0) == 1;
    RecurrentSizes s;
    s.seq = static_cast<double>(batchFirst ? x[1] : x[0]);
    s.batch = static_cast<double>(batchFirst ? x[0] : x[1]);
    s.input = static_cast<double>(x[2]);
    s.dirs = static_cast<double>(r[0]);
    s.gatesH = static_cast<double>(r[1]);
    s.hidden = static_cast<double>(r[2]);
    return s;
}

OpCost costRecurrent(const CostCtx& c) {
    const RecurrentKind& kind = kindOf(c.op().type);
    const RecurrentSizes s = sizesOf(c);
    OpCost cost;
    // Sequence steps times batch rows times directions: every step runs the input and the recurrent GEMM.
    const double rows = s.seq * s.batch * s.dirs;
    const double inputGemm = 2.0 * s.input * s.gatesH * rows;
    const double recurrentGemm = 2.0 * s.hidden * s.gatesH * rows;
    const double biasAdds = c.hasInput(3) ? 2.0 * s.gatesH * rows : 0.0;
    const double pointwise = kind.forwardPointwise * s.hidden * rows;
    cost.forwardFlops = inputGemm + recurrentGemm + biasAdds + pointwise;
    cost.bytesRead = c.allInputBytes();
    cost.bytesWritten = c.allOutputBytes();
    const bool weightsNeedGrad = c.inNeedsGrad(1) || c.inNeedsGrad(2) || c.inNeedsGrad(3);
    if (c.anyInputNeedsGrad()) {
        // The gradient flows back through every step: pointwise derivatives (about twice the forward) and the
        // hidden-state gradient through R, needed for any other gradient.
        cost.backwardFlops = 2 * pointwise + recurrentGemm;
        if (c.inNeedsGrad(0)) cost.backwardFlops += inputGemm;                 // dX = dGates W
        if (weightsNeedGrad) cost.backwardFlops += inputGemm + recurrentGemm;  // dW, dR: outer products
        if (c.inNeedsGrad(3)) cost.backwardFlops += 2.0 * s.gatesH * rows;     // dB: sums of gate gradients
        // Saved for backward: the input, the hidden states (Y), and per step the gate activations
        // (gates*H per row) plus, for LSTM, the cell state and its tanh (2*H per row) — the cuDNN reserve space.
        saveInput(c, cost, 0);
        if (!c.op().outputs.empty()) saveOutput(c, cost, 0);
        const double perRow = s.gatesH + (c.op().type == "LSTM" ? 2 * s.hidden : 0.0);
        const double elementBytes = c.inBytes(0) / std::max(1.0, c.inNumel(0));
        cost.saved.push_back({-1, perRow * rows * elementBytes});
    }
    return cost;
}

}  // namespace

void registerRecurrentOps(std::vector<OpDef>& t) {
    for (const RecurrentKind& k : kKinds) t.push_back({k.type, inferRecurrent, costRecurrent});
}

}  // namespace ts::ops

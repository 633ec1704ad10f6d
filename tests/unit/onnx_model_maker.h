#pragma once
// Builds small ONNX models with the protobuf API for the importer's tests (test_onnx_import.cpp,
// test_onnx_torch_export.cpp), including the metadata_props of newer ONNX versions that the ONNX 1.12
// protos we compile against keep as unknown fields.
#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>  // ONNX_ML and ONNX_NAMESPACE come from the onnx_proto target
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

namespace ts::testing {

namespace fs = std::filesystem;

inline fs::path tempDir() {
    fs::path dir = fs::temp_directory_path() / ("trainscope-onnx-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

using DimSpec = std::variant<int64_t, std::string>;

class ModelMaker {
public:
    explicit ModelMaker(int opset = 17) {
        model_.set_ir_version(8);
        model_.set_producer_name("trainscope-test");
        auto* o = model_.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        graph_ = model_.mutable_graph();
        graph_->set_name("test");
    }
    void input(const std::string& name, int elemType, const std::vector<DimSpec>& dims) {
        auto* vi = graph_->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elemType);
        auto* shape = tt->mutable_shape();
        for (const DimSpec& d : dims) {
            auto* dim = shape->add_dim();
            if (auto* v = std::get_if<int64_t>(&d))
                dim->set_dim_value(*v);
            else
                dim->set_dim_param(std::get<std::string>(d));
        }
    }
    void output(const std::string& name) { graph_->add_output()->set_name(name); }
    // A float initializer with its data (zeros) or only its shape.
    onnx::TensorProto* weight(const std::string& name, const std::vector<int64_t>& dims, bool withData = true) {
        auto* t = graph_->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= d;
        }
        if (withData) t->set_raw_data(std::string(size_t(n) * 4, '\0'));
        return t;
    }
    // A one-element float initializer (a scalar, as the exporters write constants they fold).
    void scalar(const std::string& name, float value) {
        auto* t = graph_->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_float_data(value);
    }
    // A Constant node holding a scalar float tensor (the legacy exporter's `g.op("Constant", value_t=...)`).
    void constant(const std::string& name, float value) {
        auto* a = node("Constant", {}, {name}, "/" + name + "/Constant")->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
        a->mutable_t()->add_float_data(value);
    }
    void ints(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
        auto* t = graph_->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
        for (int64_t v : values) t->add_int64_data(v);
    }
    onnx::NodeProto* node(const std::string& type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
        auto* n = graph_->add_node();
        n->set_op_type(type);
        n->set_name(name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return n;
    }
    static void intAttr(onnx::NodeProto* n, const std::string& key, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(key);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void intsAttr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(key);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }
    std::string bytes() const { return model_.SerializeAsString(); }
    std::string save(const std::string& file) const { return writeFile(file, bytes()); }
    static std::string writeFile(const std::string& file, const std::string& data) {
        fs::path p = tempDir() / file;
        std::ofstream(p, std::ios::binary) << data;
        return p.string();
    }
    onnx::GraphProto& graph() { return *graph_; }

    // metadata_props entry (key, value) on a message whose field `fieldNumber` holds them in ONNX 1.16+
    // (NodeProto 9, ValueInfoProto 4, GraphProto 16).
    static void metadata(google::protobuf::Message& message, int fieldNumber, const std::string& key,
                         const std::string& value) {
        onnx::StringStringEntryProto entry;
        entry.set_key(key);
        entry.set_value(value);
        message.GetReflection()->MutableUnknownFields(&message)->AddLengthDelimited(fieldNumber,
                                                                                    entry.SerializeAsString());
    }
    // The torch.export-based exporter's records: the graph signature, an initializer's fold, a node's FX node.
    void signature(const std::string& text) {
        metadata(*graph_, 16, "pkg.torch.export.ExportedProgram.graph_signature", text);
    }
    void foldedFrom(const std::string& initializer, const std::string& pythonList) {
        auto* vi = graph_->add_value_info();
        vi->set_name(initializer);
        metadata(*vi, 4, "pkg.onnxscript.optimizer.folded_from", pythonList);
    }
    static void fxNode(onnx::NodeProto* n, const std::string& text) { metadata(*n, 9, "pkg.torch.onnx.fx_node", text); }
    static void nameScopes(onnx::NodeProto* n, const std::string& pythonList) {
        metadata(*n, 9, "pkg.torch.onnx.name_scopes", pythonList);
    }

private:
    onnx::ModelProto model_;
    onnx::GraphProto* graph_;
};

}  // namespace ts::testing

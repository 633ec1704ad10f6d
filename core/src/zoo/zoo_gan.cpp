// DCGAN from the PyTorch examples (examples/dcgan/main.py) at 64x64: nz = 100, ngf = ndf = 64,
// 3 channels. Reference counts: generator 3,576,704, discriminator 2,765,568 parameters.
// One training step's forward work: G(z), then D on the real batch and on the fake batch; the
// discriminator's parameters are shared by both passes (counted once).
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

constexpr int64_t kNoise = 100, kGenFeatures = 64, kDiscFeatures = 64, kChannels = 3, kImage = 64;

// generator.main: ConvTranspose2d/BatchNorm2d/ReLU blocks from 1x1 up to 64x64, then Tanh.
int generator(ModelBuilder& b, int z) {
    auto g = b.scope("generator");
    auto main = b.scope("main");
    int x = b.convTranspose2d("0", z, kGenFeatures * 8, 4, 1, 0, 0, false);  // 4x4
    x = b.relu(b.batchNorm("1", x), "2");
    int index = 3;
    for (int64_t mult : {4, 2, 1}) {  // 8x8, 16x16, 32x32
        x = b.convTranspose2d(std::to_string(index), x, kGenFeatures * mult, 4, 2, 1, 0, false);
        x = b.batchNorm(std::to_string(index + 1), x);
        x = b.relu(x, std::to_string(index + 2));
        index += 3;
    }
    x = b.convTranspose2d(std::to_string(index), x, kChannels, 4, 2, 1, 0, false);  // 64x64
    return b.tanh(x, std::to_string(index + 1));
}

// discriminator.main: strided Conv2d/BatchNorm2d/LeakyReLU(0.2) down to 1x1, then Sigmoid;
// forward() flattens to one probability per image.
int discriminator(ModelBuilder& b, int image) {
    auto d = b.scope("discriminator");
    int x;
    {
        auto main = b.scope("main");
        x = b.leakyRelu(b.conv2d("0", image, kDiscFeatures, 4, 2, 1, 1, false), 0.2, "1");  // 32x32
        int index = 2;
        for (int64_t mult : {2, 4, 8}) {  // 16x16, 8x8, 4x4
            x = b.conv2d(std::to_string(index), x, kDiscFeatures * mult, 4, 2, 1, 1, false);
            x = b.batchNorm(std::to_string(index + 1), x);
            x = b.leakyRelu(x, 0.2, std::to_string(index + 2));
            index += 3;
        }
        x = b.conv2d(std::to_string(index), x, 1, 4, 1, 0, 1, false);  // 1x1
        x = b.sigmoid(x, std::to_string(index + 1));
    }
    return b.reshape(x, {-1});
}

}  // namespace

Graph buildDcgan(const ZooArgs& a) {
    ModelBuilder b(a.model());
    int noise = b.input("noise", {Dim::batch(), kNoise, 1, 1});
    int real = b.input("real_images", {Dim::batch(), kChannels, kImage, kImage});
    int fake = generator(b, noise);
    int realScore = discriminator(b, real);
    int fakeScore = discriminator(b, fake);
    return b.finish({realScore, fakeScore});
}

}  // namespace ts::zoo

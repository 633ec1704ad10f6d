// The pickle length check run before LibTorch reads a TorchScript archive: real pickles pass, and
// every length that points past the end of the data (or a memo index no pickle could have) is
// refused with the opcode and its position.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../../core/src/importers/pickle_check.h"

namespace {

std::vector<uint8_t> fromHex(const std::string& hex) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return out;
}

// pickle.dumps({'weight': [1, 2.5, 'x' * 300, b'yy', (None, True)], 'n': 2**70}, protocol=2 and 4)
const std::string kProtocol2 = "80027d710028580600000077656967687471015d7102284b01474004000000000000582c0100007878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787103635f636f646563730a656e636f64650a710458020000007979710558060000006c6174696e3171068671075271084e888671096558010000006e710a8a09000000000000000040752e";
const std::string kProtocol4 = "80049567010000000000007d94288c06776569676874945d94284b01474004000000000000582c0100007878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878789443027979944e888694658c016e948a09000000000000000040752e";

std::optional<std::string> check(const std::vector<uint8_t>& b) { return ts::findPickleLengthProblem(b.data(), b.size()); }

size_t find(const std::vector<uint8_t>& b, std::vector<uint8_t> pattern) {
    auto it = std::search(b.begin(), b.end(), pattern.begin(), pattern.end());
    return it == b.end() ? std::string::npos : static_cast<size_t>(it - b.begin());
}

}  // namespace

TEST(PickleCheck, RealPicklesPass) {
    EXPECT_EQ(check(fromHex(kProtocol2)), std::nullopt);
    EXPECT_EQ(check(fromHex(kProtocol4)), std::nullopt);
}

TEST(PickleCheck, CorruptedStringLengthIsRefused) {
    std::vector<uint8_t> b = fromHex(kProtocol2);
    size_t x = find(b, {'X', 0x2c, 0x01, 0x00, 0x00});  // BINUNICODE of 300 bytes
    ASSERT_NE(x, std::string::npos);
    b[x + 4] = 0xf0;  // 300 -> 4026532140 bytes
    auto problem = check(b);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("BINUNICODE at byte " + std::to_string(x) + " claims 4026532140 bytes"), std::string::npos)
        << *problem;
}

TEST(PickleCheck, CorruptedFrameAndMemoAreRefused) {
    std::vector<uint8_t> b = fromHex(kProtocol4);
    ASSERT_EQ(b[2], 0x95);  // FRAME after PROTO 4
    b[10] = 0x7f;           // frame length's top byte
    auto problem = check(b);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("FRAME at byte 2"), std::string::npos) << *problem;

    std::vector<uint8_t> memo = {0x80, 0x02, ']', 'r', 0xff, 0xff, 0xff, 0x7f, '.'};  // LONG_BINPUT 2^31-1
    problem = check(memo);
    ASSERT_TRUE(problem.has_value());
    EXPECT_NE(problem->find("memo index 2147483647"), std::string::npos) << *problem;
}

TEST(PickleCheck, TruncationAndUnknownOpcodes) {
    std::vector<uint8_t> b = fromHex(kProtocol2);
    b.resize(b.size() / 2);  // cut inside the 300-byte string
    EXPECT_TRUE(check(b).has_value());
    // An opcode the walk does not know is left for the unpickler to report.
    EXPECT_EQ(check({0x80, 0x02, 0xff, 0x00}), std::nullopt);
    EXPECT_EQ(check({}), std::nullopt);
}

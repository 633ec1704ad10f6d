#include <gtest/gtest.h>

#include <limits>

#include "trainscope/core/dim.h"
#include "trainscope/core/errors.h"

using ts::Dim;

TEST(Dim, ArithmeticKeepsBatchSymbolic) {
    Dim n = Dim::batch(), s = Dim::seq();
    Dim merged = n * s;
    EXPECT_EQ(merged.str(), "N*S");
    EXPECT_EQ(merged.eval(4, 128), 512);
    EXPECT_EQ((n * Dim(2) + Dim(1)).str(), "2*N+1");
    EXPECT_EQ((n + n).str(), "2*N");
    EXPECT_EQ((n - n).str(), "0");
    EXPECT_TRUE((n - n).isConstant());
    auto q = (n * s * Dim(768)).divExact(Dim(12) * Dim(64));
    ASSERT_TRUE(q.has_value());
    EXPECT_EQ(*q, n * s);
    EXPECT_FALSE(n.divExact(Dim(2)).has_value());
    EXPECT_EQ(Dim(7).floorDiv(2)->constant(), 3);
    EXPECT_EQ(Dim(-7).floorDiv(2)->constant(), -4);
}

TEST(Dim, ParseRoundTrips) {
    for (std::string text : {"64", "N", "N*S", "2*N+1", "N*S^2", "-3", "4*N*S-2"})
        EXPECT_EQ(Dim::parse(text).str(), text) << text;
    EXPECT_EQ(Dim::parse("batch").str(), "N");
    EXPECT_THROW(Dim::parse("N+"), std::invalid_argument);
    EXPECT_THROW(Dim::parse("X"), std::invalid_argument);
    EXPECT_THROW(Dim::parse("99999999999999999999"), std::invalid_argument);
}

TEST(Dim, OverflowIsAnErrorNotWraparound) {
    Dim big(int64_t(1) << 40);
    EXPECT_THROW(big * big, ts::ShapeError);
    EXPECT_THROW(big.constant() == 0 ? Dim(0) : Dim::batch().constant(), std::logic_error);
}

// A file can hold INT64_MIN as a size (found by fuzz_onnx in a Reshape target): it is written out
// exactly, without negating it in int64_t.
TEST(Dim, TheMostNegativeSizeIsWrittenWithoutOverflow) {
    EXPECT_EQ(Dim(std::numeric_limits<int64_t>::min()).str(), "-9223372036854775808");
    EXPECT_EQ(Dim(-3).str(), "-3");
}

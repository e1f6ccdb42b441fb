import Foundation

/// What a model's file name and header say about its quantization and size.
enum ModelFileNames {
    /// llama.cpp's `LLAMA_FTYPE_*` names (llama.h, llama-cpp-python 0.3.36) for a header's
    /// `general.file_type`, without the `MOSTLY_`/`ALL_` prefix: the names quantized files carry.
    static let fileTypes: [Int: String] = [
        0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 4: "Q4_1_SOME_F16", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
        10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
        17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS",
        24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS",
        31: "IQ1_M", 32: "BF16", 33: "Q4_0_4_4", 34: "Q4_0_4_8", 35: "Q4_0_8_8", 36: "TQ1_0", 37: "TQ2_0",
        38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
    ]

    /// A quantization name in a file name (the last one, upper-cased): `Q4_K_M` in
    /// `Llama-3.2-3B-Instruct-Q4_K_M.gguf`, `Q4_1` in `SmolLM2-135M-Instruct.Q4_1.gguf`,
    /// `UD-Q4_K_XL`, `IQ3_XXS`, `BF16`…; nil when it names none.
    static func quantization(inFileName name: String) -> String? {
        var stem = name
        if let s = SplitFiles.splitName(name) { stem = s.stem } else if stem.lowercased().hasSuffix(".gguf") { stem = String(stem.dropLast(5)) }
        let upper = stem.uppercased()
        let range = NSRange(upper.startIndex..., in: upper)
        guard let m = quantizationPattern.matches(in: upper, range: range).last, let r = Range(m.range, in: upper) else { return nil }
        return String(upper[r])
    }

    /// A size in a name: `135M` in `SmolLM2-135M-Instruct`, `8x7B`, `1.5B`; nil when none.
    static func parameterLabel(inName name: String) -> String? {
        let range = NSRange(name.startIndex..., in: name)
        guard let m = parameterPattern.firstMatch(in: name, range: range), let r = Range(m.range, in: name) else { return nil }
        return String(name[r]).uppercased().replacingOccurrences(of: "X", with: "x")
    }

    /// Not after a letter or digit (an underscore may precede: `model_q4_k_m`), not
    /// followed by one: the quantization names llama.cpp's tools and the usual uploaders write.
    static let quantizationPattern = try! NSRegularExpression(
        pattern: #"(?<![A-Z0-9])(?:UD-)?(?:I?Q[0-9](?:_[A-Z0-9]+)*|TQ[0-9]_[0-9]|BF16|F16|F32|MXFP4(?:_MOE)?|NVFP4)(?![A-Z0-9])"#)
    static let parameterPattern = try! NSRegularExpression(
        pattern: #"(?<![A-Za-z0-9.])(?:[0-9]+[xX])?[0-9]+(?:\.[0-9]+)?[BbMm](?![A-Za-z0-9])"#)
}

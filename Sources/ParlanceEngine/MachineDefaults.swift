#if canImport(Darwin)
import Darwin
#endif
import Foundation

/// Defaults taken from the machine the daemon runs on, not the one it was built on.
public enum MachineDefaults {
    /// CPU threads for llama.cpp: the physical cores this process may run on, as llama.cpp
    /// chooses its own default (hyper-threads share a core's vector units, so a second
    /// thread per core only adds contention). Linux: the distinct (package, core) pairs of
    /// the CPUs in this process's affinity mask (taskset, cgroup cpusets); macOS:
    /// `hw.perflevel0.physicalcpu` (performance cores), else `hw.physicalcpu`. When the
    /// topology cannot be read: the online CPUs, halved above four (llama.cpp's fallback).
    public static let threads: Int = physicalCores() ?? fallbackCores()

    static func fallbackCores() -> Int {
        let n = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return n <= 4 ? n : n / 2
    }

    #if os(Linux)
    static func physicalCores() -> Int? {
        let usable = allowedCPUs() ?? Array(0..<ProcessInfo.processInfo.activeProcessorCount)
        var cores = Set<String>()
        for cpu in usable {
            let base = "/sys/devices/system/cpu/cpu\(cpu)/topology/"
            guard let core = try? String(contentsOfFile: base + "core_id", encoding: .utf8),
                  let pkg = try? String(contentsOfFile: base + "physical_package_id", encoding: .utf8) else { return nil }
            cores.insert(pkg.trimmingCharacters(in: .whitespacesAndNewlines) + ":" + core.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return cores.isEmpty ? nil : cores.count
    }

    /// The CPUs this process may run on: `Cpus_allowed_list` of /proc/self/status ("0-3,8").
    static func allowedCPUs() -> [Int]? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        var cpus: [Int] = []
        for part in line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let ends = part.split(separator: "-").compactMap { Int($0) }
            guard let lo = ends.first, let hi = ends.last, lo <= hi else { return nil }
            cpus += Array(lo...hi)
        }
        return cpus.isEmpty ? nil : cpus
    }
    #else
    static func physicalCores() -> Int? {
        for name in ["hw.perflevel0.physicalcpu", "hw.physicalcpu"] {
            var n: Int32 = 0
            var size = MemoryLayout<Int32>.size
            if sysctlbyname(name, &n, &size, nil, 0) == 0, n > 0 { return Int(n) }
        }
        return nil
    }
    #endif
}

import ParlanceJSON
import Foundation
import ParlanceEngine
import Synchronization

// The registry's loads and unloads: a use claimed under the lock (the engine, a load under
// way, or a load started after making room), the load's result recorded, and the unloads
// (idle after the keep-alive, or to make room) that save KV prefixes and free memory off
// the lock.
extension ModelRegistry {
    /// What a use found under the lock: the engine, or a load to wait for (one this use
    /// started, or one already under way).
    enum Claim { case ready(Engine), wait(Task<Result<Engine, EngineError>, Never>, started: Bool) }

    /// Under the lock: pins `name` and returns its engine, the load under way, or a load
    /// started now (after making room for it).
    func claim(_ name: String) throws -> Claim {
        try slots.withLock { all in
            guard var s = all[name] else { throw unknown(name) }
            switch s.phase {
            case .ready(let e):
                s.uses += 1
                s.generation += 1
                s.lastUsed = .now
                all[name] = s
                return .ready(e)
            case .loading(let t):
                s.uses += 1
                s.generation += 1
                all[name] = s
                return .wait(t, started: false)
            case .unloaded, .unloading, .failed:
                let task = try startLoad(name, s.model.engine, in: &all)
                s.phase = .loading(task)
                s.loads += 1
                s.uses += 1
                s.generation += 1
                all[name] = s
                return .wait(task, started: true)
            }
        }
    }

    /// Under the lock: unloads the idle models that make room for `name`, and starts its
    /// load once every unload under way has freed its memory.
    private func startLoad(_ name: String, _ config: EngineConfig, in all: inout [String: Slot]) throws -> Task<Result<Engine, EngineError>, Never> {
        let victims = try makeRoom(for: name, in: &all)
        var waits: [Task<Void, Never>] = []
        for v in victims {
            guard case .ready(let e) = all[v]?.phase else { continue }
            let t = unloadTask(v, e, reason: "to make room for '\(name)'")
            all[v]!.phase = .unloading
            all[v]!.unloading = t
            waits.append(t)
        }
        // Every unload under way (this model's, the victims', idle ones') frees its
        // memory before this load takes any.
        for other in all.values { if case .unloading = other.phase, let u = other.unloading { waits.append(u) } }
        return loadTask(name, config, after: waits)
    }

    /// Loads the engine once `waits` are done, and records the result.
    private func loadTask(_ name: String, _ config: EngineConfig, after waits: [Task<Void, Never>]) -> Task<Result<Engine, EngineError>, Never> {
        Task.detached(priority: .userInitiated) { [self] () -> Result<Engine, EngineError> in
            for w in waits { await w.value }
            let start = ContinuousClock.now
            // On this task's (pool) thread, as before the registry: loading on a thread of
            // its own measured ~150 ms slower to the first token (cause not pinned down).
            let result = { () -> Result<Engine, EngineError> in
                do { return .success(try Engine(config: config)) } catch let e as EngineError { return .failure(e) } catch { return .failure(.invalidModelFile(path: config.modelPath, reason: "\(error)")) }
            }()
            loaded(name, result, seconds: (ContinuousClock.now - start).inSeconds)
            return result
        }
    }

    /// The load finished: record it, and start the keep-alive if nobody waits any more.
    private func loaded(_ name: String, _ result: Result<Engine, EngineError>, seconds: Double) {
        slots.withLock { all in
            guard var s = all[name] else { return }
            switch result {
            case .success(let e):
                s.phase = .ready(e)
                s.measured = e.info.memory
                s.lastUsed = .now
                log("model '\(name)' loaded in \(String(format: "%.2f", seconds)) s (\(Self.mib(e.info.memory.totalBytes)))")
                if s.uses == 0 { scheduleIdle(&s) }
            case .failure(let e):
                s.phase = .failed(e)
                s.inspected = nil
                log("model '\(name)' failed to load: \(e)")
            }
            s.unloading = nil
            all[name] = s
        }
    }

    /// Under the lock: unload `s` after its keep-alive unless a use comes first.
    func scheduleIdle(_ s: inout Slot) {
        guard s.model.keepAlive > 0, case .ready = s.phase else { return }
        let (name, generation, delay) = (s.model.name, s.generation, s.model.keepAlive)
        Task.detached { [self] in
            guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
            expire(name, generation: generation)
        }
    }

    /// The keep-alive ran out: unloads the model unless a use came since `generation`.
    private func expire(_ name: String, generation: Int) {
        slots.withLock { all in
            guard var s = all[name], s.generation == generation, s.uses == 0, case .ready(let e) = s.phase else { return }
            s.unloading = unloadTask(name, e, reason: "idle for \(s.model.keepAlive) s")
            s.phase = .unloading
            all[name] = s
        }
    }

    /// Saves the engine's KV prefixes and stops it, off the lock, then drops the last
    /// reference (its memory goes with it) before the model reads `unloaded`.
    private func unloadTask(_ name: String, _ engine: Engine, reason: String) -> Task<Void, Never> {
        let held = Handoff(engine)
        return Task.detached { [self] in
            await onOwnThread("parlance-unload") {
                if let engine = held.take() { engine.unload() }
                // The engine is gone: what its buffers freed goes back to the system.
                ProcessMemory.release()
            }
            slots.withLock { all in
                if case .unloading = all[name]?.phase { all[name]?.phase = .unloaded }
            }
            log("model '\(name)' unloaded (\(reason))")
        }
    }
}

/// Runs blocking work (an unload's saves and teardown) on a thread of its own, not one of
/// the concurrency pool's (two on this machine, which message reading needs), and awaits it.
func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in
        let t = Thread { c.resume(returning: body()) }
        t.name = name
        t.stackSize = 8 << 20
        t.start()
    }
}

// The memo of an op's plans: one (config, loaded kernel) per problem key, made at the key's first call and kept for
// the process. Plans are made outside the lock (planning compiles and loads a kernel) and never erased; map nodes do
// not move, so the references handed out stay valid. A thread's last hit is returned without the lock.
#pragma once

#include <mutex>
#include <unordered_map>
#include <utility>

namespace tessera::ops {

template <class Key, class Plan, class Hash>
class PlanCache {
public:
    // The plan of `key`, made by make() (returning a Plan) when it has none yet.
    template <class Make>
    const Plan& get(const Key& key, Make&& make) {
        thread_local const PlanCache* last_cache = nullptr;
        thread_local Key last_key{};
        thread_local const Plan* last_plan = nullptr;
        if (last_cache == this && last_plan != nullptr && key == last_key) [[likely]] return *last_plan;
        const Plan* plan = find(key);
        if (plan == nullptr) {
            Plan made = make();
            std::lock_guard lock(mutex_);
            plan = &plans_.emplace(key, std::move(made)).first->second;  // a racing thread's plan wins: same content
        }
        last_cache = this, last_key = key, last_plan = plan;
        return *plan;
    }

private:
    const Plan* find(const Key& key) {
        std::lock_guard lock(mutex_);
        const auto it = plans_.find(key);
        return it == plans_.end() ? nullptr : &it->second;
    }

    std::mutex mutex_;
    std::unordered_map<Key, Plan, Hash> plans_;
};

}  // namespace tessera::ops

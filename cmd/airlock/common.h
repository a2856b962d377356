// Shared by the subcommands: the cgroup backend and leftover sweeping.
#pragma once

#include <memory>
#include <string>

#include "sandbox/cgroup.h"

// Detects the backend; prints one line and returns null on failure.
std::unique_ptr<airlock::sandbox::CgroupBackend> open_cgroups();

// Sweeps leftovers of dead airlock processes; prints what it removed when `verbose`.
void sweep_leftovers(const std::string& state_dir, airlock::sandbox::CgroupBackend& cgroups,
                     bool verbose);

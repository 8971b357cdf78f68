package actors

// addWorkers fills in the worker hosts ([[workers]] and [remote]) the
// session's scheduler may place tasks on.
func (d *subagents) addWorkers(spec *FleetSpec) {}

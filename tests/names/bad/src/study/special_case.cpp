// A fixture for check-names.py: each comparison below must be reported.
bool slow(const std::string& engine) { return engine == "packet"; }
bool ib(const std::string& transport) { return "infiniband" != transport; }
bool probe(const std::string& mode) { return mode == "packet"; }  // names: not a registry name

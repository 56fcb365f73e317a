podnet_layer(core)
podnet_layer(topology)
podnet_layer(engine podnet_core)
podnet_layer(collective podnet_core)

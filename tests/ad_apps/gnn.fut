-- Graph message passing: edges gather a row h[src], transform it with tanh(W·h), and the
-- messages are summed per destination with reduce_by_index over whole rows (operator
-- map2 (+), neutral element a replicate); two rounds with shared weights and a quadratic
-- readout. Gradient in the pair (W, h0) and a jvp in W; also running sums of rows via scan
-- with an array-valued operator. Expected values from JAX (f64, .at[].add for the
-- aggregation, cumsum for the row scan).
-- ==
-- entry: gnn_grad
-- input { [3i64, 1i64, 0i64, 2i64, 3i64] [1i64, 1i64, 0i64, 3i64, 3i64] [0.92f64, -0.36f64] [[0.34f64, 0.97f64], [1.7f64, -0.55f64]] [[1.07f64, 0.52f64], [-0.28f64, 1.09f64], [0.51f64, 1.08f64], [-0.53f64, -0.0f64]] }
-- output { [[2.137010855981954f64, 1.6972077858154424f64], [-0.21849610008124204f64, -1.4717969194879277f64]] [[3.2633031329128497f64, 0.632973752026691f64], [-1.5344618348295285f64, -0.9488894579362399f64], [-1.0863404722704384f64, 0.8960252985239014f64], [-0.14036610410616368f64, -0.29068610339997736f64]] }
-- input { [0i64, 2i64, 1i64, 0i64, 2i64, 0i64] [2i64, 0i64, 2i64, 1i64, 1i64, 2i64] [1.34f64, -1.99f64, -1.41f64] [[-0.31f64, -0.31f64, -0.08f64], [-0.01f64, 0.6f64, -0.91f64], [1.79f64, 0.37f64, -0.46f64]] [[-0.57f64, -0.48f64, -2.23f64], [0.4f64, -1.11f64, -0.54f64], [-1.1f64, -0.6f64, 0.02f64]] }
-- output { [[-74.7887040116297f64, 111.21022071638009f64, 360.4716804528519f64], [1.9814415972296278f64, -65.07314230489294f64, -59.702161588005055f64], [-32.53811064660929f64, -107.93233086402634f64, -274.43895796483196f64]] [[229.89376061502657f64, 62.23084082386059f64, -58.67867213972008f64], [88.19678623256057f64, 54.57786933552741f64, -45.42271474535961f64], [-71.41476319974781f64, 16.022624508023988f64, 27.712896278983848f64]] }
-- ==
-- entry: gnn_jvp
-- input { [3i64, 1i64, 0i64, 2i64, 3i64] [1i64, 1i64, 0i64, 3i64, 3i64] [0.92f64, -0.36f64] [[0.34f64, 0.97f64], [1.7f64, -0.55f64]] [[1.07f64, 0.52f64], [-0.28f64, 1.09f64], [0.51f64, 1.08f64], [-0.53f64, -0.0f64]] [[0.39f64, 0.02f64], [0.02f64, -0.77f64]] }
-- output { 1.99629209555335f64 }
-- input { [0i64, 2i64, 1i64, 0i64, 2i64, 0i64] [2i64, 0i64, 2i64, 1i64, 1i64, 2i64] [1.34f64, -1.99f64, -1.41f64] [[-0.31f64, -0.31f64, -0.08f64], [-0.01f64, 0.6f64, -0.91f64], [1.79f64, 0.37f64, -0.46f64]] [[-0.57f64, -0.48f64, -2.23f64], [0.4f64, -1.11f64, -0.54f64], [-1.1f64, -0.6f64, 0.02f64]] [[-1.29f64, 1.52f64, -1.28f64], [-0.5f64, -0.03f64, 0.62f64], [0.21f64, 0.03f64, 0.49f64]] }
-- output { -376.4867165942579f64 }
-- ==
-- entry: rowscan_grad
-- input { [[0.13f64, 0.19f64], [-0.06f64, -0.01f64], [0.7f64, -0.66f64], [0.7f64, -0.15f64]] [[0.06f64, -0.19f64], [0.9f64, 0.76f64], [0.01f64, -0.44f64], [1.86f64, 0.54f64]] }
-- output { [[5.6254f64, -0.05659999999999987f64], [5.6098f64, 0.015600000000000058f64], [5.4838f64, -0.25799999999999995f64], [5.4684f64, -0.6804f64]] }
-- input { [[0.36f64, -0.98f64, 0.57f64], [-0.67f64, -1.17f64, -0.12f64], [-0.53f64, 0.22f64, 0.26f64]] [[-0.63f64, 0.28f64, -0.09f64], [-1.66f64, 1.51f64, -0.04f64], [-0.19f64, 0.81f64, -1.44f64]] }
-- output { [[0.8948000000000002f64, -10.1684f64, -2.1834f64], [1.3484000000000003f64, -9.6196f64, -2.0808f64], [0.31920000000000004f64, -3.1266000000000003f64, -2.0448f64]] }

def mv [a] [b] (m: [a][b]f64) (v: [b]f64) : [a]f64 = map (\r -> f64.sum (map2 (*) r v)) m

-- One round of message passing on a directed graph: each edge (src → dst) sends
-- tanh(W·h[src]) (a gathered row); messages are summed per destination node with a
-- reduce_by_index whose elements are whole rows, then added to the node's own state.
def layer [n] [e] [d] (src: [e]i64) (dst: [e]i64) (w: [d][d]f64) (h: [n][d]f64) : [n][d]f64 =
  let msgs = map (\s -> map f64.tanh (mv w h[s])) src
  let agg = reduce_by_index (replicate n (replicate d 0)) (map2 (+)) (replicate d 0) dst msgs
  in map2 (map2 (+)) h agg

-- Two rounds with the same weights, then a readout of every node's state.
def loss [n] [e] [d] (src: [e]i64) (dst: [e]i64) (r: [d]f64) (w: [d][d]f64, h0: [n][d]f64) : f64 =
  let h = layer src dst w (layer src dst w h0)
  in f64.sum (map (\hv -> f64.sum (map2 (*) r hv) ** 2) h)

entry gnn_grad [n] [e] [d] (src: [e]i64) (dst: [e]i64) (r: [d]f64) (w: [d][d]f64) (h0: [n][d]f64)
               : ([d][d]f64, [n][d]f64) =
  vjp (loss src dst r) (w, h0) 1

entry gnn_jvp [n] [e] [d] (src: [e]i64) (dst: [e]i64) (r: [d]f64) (w: [d][d]f64) (h0: [n][d]f64)
              (dw: [d][d]f64) : f64 =
  jvp (\w -> loss src dst r (w, h0)) w dw

-- Running sums of whole rows (scan with an array-valued operator), then a weighted sum.
entry rowscan_grad [n] [d] (x: [n][d]f64) (c: [n][d]f64) : [n][d]f64 =
  vjp (\x -> let s = scan (map2 (+)) (replicate d 0) x
             in f64.sum (map2 (\sr cr -> f64.sum (map2 (\a b -> a * a * b) sr cr)) s c))
      x 1

-- The definable part of the prelude (Section 10), written in runic itself. Everything else
-- in the prelude is an intrinsic (see intrinsics.rs). The interpreter relies on exactly
-- this split: it implements the intrinsics natively and evaluates these definitions.

def (|>) '^a '^b (x: a) (f: a -> b) : b = f x
def (<|) '^a '^b (f: a -> b) (x: a) : b = f x
def (>->) '^a '^b '^c (f: a -> b) (g: b -> c) (x: a) : c = g (f x)
def (<-<) '^a '^b '^c (g: b -> c) (f: a -> b) (x: a) : c = g (f x)

def flip '^a '^b '^c (f: a -> b -> c) (y: b) (x: a) : c = f x y
def curry '^a '^b '^c (f: (a, b) -> c) (x: a) (y: b) : c = f (x, y)
def uncurry '^a '^b '^c (f: a -> b -> c) ((x, y): (a, b)) : c = f x y
def const '^a '^b (x: a) (_: b) : a = x
def id '^a (x: a) : a = x

def iterate 'a (n: i32) (f: a -> a) (x: a) : a =
  loop acc = x for _i < n do f acc
def iterate_until 'a (p: a -> bool) (f: a -> a) (x: a) : a =
  loop acc = x while !(p acc) do f acc
def iterate_while 'a (p: a -> bool) (f: a -> a) (x: a) : a =
  loop acc = x while p acc do f acc

def foldl [n] 'a 'b (f: a -> b -> a) (acc: a) (bs: [n]b) : a =
  loop acc = acc for b in bs do f acc b
def foldr [n] 'a 'b (f: b -> a -> a) (acc: a) (bs: [n]b) : a =
  loop acc = acc for b in bs[::-1] do f b acc

def not (x: bool) : bool = !x
def r32 (x: i32) : f32 = f32.i32 x
def t32 (x: f32) : i32 = i32.f32 x
def r64 (x: i32) : f64 = f64.i32 x
def t64 (x: f64) : i32 = i32.f64 x

def jvp 'a 'b (f: a -> b) (x: a) (dx: a) : b = (jvp2 f x dx).1
def vjp 'a 'b (f: a -> b) (x: a) (dy: b) : a = (vjp2 f x dy).1
def jmp [n] 'a 'b (f: a -> b) (x: a) (dxs: [n]a) : [n]b = (jmp2 f x dxs).1
def mjp [n] 'a 'b (f: a -> b) (x: a) (dys: [n]b) : [n]a = (mjp2 f x dys).1

def with_vjp_tape 'a 'b 'c (f: a -> (c, b)) (f': (c, b) -> a) (x: a) : b =
  with_vjp (\z -> (f z).1) (\_ dy -> f' ((f x).0, dy)) x

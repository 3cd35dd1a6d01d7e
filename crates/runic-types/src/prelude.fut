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

-- The module types the numeric modules (f32, i64, ...) satisfy, for parametric modules
-- such as `module mk_linalg (T: real) = ...`.
module type from_prim = {
  type t
  val i8 : i8 -> t
  val i16 : i16 -> t
  val i32 : i32 -> t
  val i64 : i64 -> t
  val u8 : u8 -> t
  val u16 : u16 -> t
  val u32 : u32 -> t
  val u64 : u64 -> t
  val f32 : f32 -> t
  val f64 : f64 -> t
  val bool : bool -> t
}

module type numeric = {
  include from_prim
  val + : t -> t -> t
  val - : t -> t -> t
  val * : t -> t -> t
  val / : t -> t -> t
  val % : t -> t -> t
  val ** : t -> t -> t
  val to_i64 : t -> i64
  val == : t -> t -> bool
  val != : t -> t -> bool
  val < : t -> t -> bool
  val > : t -> t -> bool
  val <= : t -> t -> bool
  val >= : t -> t -> bool
  val max : t -> t -> t
  val min : t -> t -> t
  val neg : t -> t
  val abs : t -> t
  val sgn : t -> t
  val highest : t
  val lowest : t
  val sum [n] : [n]t -> t
  val product [n] : [n]t -> t
  val maximum [n] : [n]t -> t
  val minimum [n] : [n]t -> t
}

module type integral = {
  include numeric
  val // : t -> t -> t
  val %% : t -> t -> t
  val & : t -> t -> t
  val | : t -> t -> t
  val ^ : t -> t -> t
  val << : t -> t -> t
  val >> : t -> t -> t
  val >>> : t -> t -> t
  val not : t -> t
  val popc : t -> i32
  val clz : t -> i32
  val ctz : t -> i32
  val mul_hi : t -> t -> t
  val mad_hi : t -> t -> t -> t
  val num_bits : i32
  val get_bit : i32 -> t -> i32
  val set_bit : i32 -> t -> i32 -> t
}

module type size = {
  include integral
}

module type real = {
  include numeric
  val from_fraction : i64 -> i64 -> t
  val to_f64 : t -> f64
  val recip : t -> t
  val sqrt : t -> t
  val rsqrt : t -> t
  val cbrt : t -> t
  val exp : t -> t
  val log : t -> t
  val log2 : t -> t
  val log10 : t -> t
  val log1p : t -> t
  val sin : t -> t
  val cos : t -> t
  val tan : t -> t
  val asin : t -> t
  val acos : t -> t
  val atan : t -> t
  val sinh : t -> t
  val cosh : t -> t
  val tanh : t -> t
  val asinh : t -> t
  val acosh : t -> t
  val atanh : t -> t
  val atan2 : t -> t -> t
  val hypot : t -> t -> t
  val gamma : t -> t
  val lgamma : t -> t
  val erf : t -> t
  val erfc : t -> t
  val lerp : t -> t -> t -> t
  val mad : t -> t -> t -> t
  val fma : t -> t -> t -> t
  val ceil : t -> t
  val floor : t -> t
  val trunc : t -> t
  val round : t -> t
  val copysign : t -> t -> t
  val isinf : t -> bool
  val isnan : t -> bool
  val inf : t
  val nan : t
  val pi : t
  val e : t
  val epsilon : t
}

module type float = {
  include real
  type int_t
  val from_bits : int_t -> t
  val to_bits : t -> int_t
  val num_bits : i32
  val get_bit : i32 -> t -> i32
  val set_bit : i32 -> t -> i32 -> t
  val ldexp : t -> i32 -> t
  val nextafter : t -> t -> t
}

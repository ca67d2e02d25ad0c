;; float32-in, float32-out RMSNorm and LayerNorm over rows in a shared memory.
;;
;; pointers are byte offsets into the imported memory, 4-byte aligned: x and y point at
;; row 0 (row i at x + 4·i·n; y equals x or does not overlap it), scale and bias at n
;; float64 each, mean and rstd at one float32 per row (row i at +4·i), prepared at the
;; 16 + 8·n bytes prepareF32 writes from scale and bias. bias, mean and rstd are 0 when
;; absent, so offset 0 is never a buffer. Rows [rowStart, rowEnd) are normalized, and
;; no byte outside them is read or written in x and y.
;;
;; speed: one loop writes row i while it sums row i + 1, so the next row streams in from
;; memory while the stores drain, as in a copy; row i was read by the previous loop and
;; is still in L1. 8 elements per iteration, a scalar tail for n mod 8. A row's sums go
;; through the same chains in the same order whether fused or not, and its output path
;; depends on that row alone, so any split into row ranges gives identical bytes.
;;
;; numerics, sums: float32 values promoted exactly to float64, in four float64x2 chains
;; per sum, so squares of 1e±30 stay in range and rows of 65,536 lose about 2^-40
;; relative: the sums need no fallback.
;;
;; numerics, output: in float32, y = ((x - μhi) - μlo)·r·g + β with μhi = μ rounded to
;; float32 and μlo the rest, also rounded: x - μhi is exact near the mean (Sterbenz)
;; and |μlo| ≤ |x - μ| for every other float32 x, so x - μ carries 2u of relative
;; error at most (u = 2^-24), even for a mean 1e6 times the spread. With r, g and β
;; rounded to float32, P = (x - μ)·r·g is off by 6u·|P| and y by u·|β| + u·|y| more;
;; as |P| ≤ |y| + |β|, that is at most 7u·|y| + 7u·max|β|: within the contract's
;; 1e-5 + 1e-5·|y| when max|β| ≤ 16. A row past that, or whose r or x - μ leave
;; float32's comfortable range, or holding NaN or Inf, gets the float64 output
;; (x - μ)·r·g + β rounded once, as the JS kernel computes it (see $fits).
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; prepared: [max|g| f64][max|β| f64][g as float32 × n][β as float32 × n, or zeros]
  (func (export "prepareF32") (param $g i32) (param $b i32) (param $n i32) (param $p i32)
    (f64.store (local.get $p) (call $narrow (local.get $g) (local.get $n) (i32.add (local.get $p) (i32.const 16))))
    (call $prepareBias (local.get $b) (local.get $n) (local.get $p)))

  ;; prepareF32 for a scale of n copies of g (no weight sent: g = weight_offset + 1), with that
  ;; float64 scale written too: one pass of stores where filling the scale from JavaScript and
  ;; narrowing it back cost more than the row's normalization
  (func (export "prepareConstF32") (param $g f64) (param $scale i32) (param $b i32) (param $n i32) (param $p i32)
    (local $i i32) (local $v v128) (local $at i32)
    (local.set $v (f64x2.splat (local.get $g)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.add (local.get $i) (i32.const 1)) (local.get $n)))
        (v128.store align=8 (i32.add (local.get $scale) (i32.shl (local.get $i) (i32.const 3))) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next)))
    (if (i32.lt_u (local.get $i) (local.get $n))
      (then (f64.store (i32.add (local.get $scale) (i32.shl (local.get $i) (i32.const 3))) (local.get $g))))
    (local.set $v (f32x4.splat (f32.demote_f64 (local.get $g))))
    (local.set $at (i32.add (local.get $p) (i32.const 16)))
    (local.set $i (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $n)))
        (v128.store align=4 (i32.add (local.get $at) (i32.shl (local.get $i) (i32.const 2))) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $next)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (f32.store (i32.add (local.get $at) (i32.shl (local.get $i) (i32.const 2))) (f32.demote_f64 (local.get $g)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (f64.store (local.get $p) (f64.abs (local.get $g)))
    (call $prepareBias (local.get $b) (local.get $n) (local.get $p)))

  ;; max|β| and β as float32 (zeros when there is no bias) into prepared
  (func $prepareBias (param $b i32) (param $n i32) (param $p i32)
    (f64.store offset=8 (local.get $p)
      (if (result f64) (local.get $b)
        (then (call $narrow (local.get $b) (local.get $n) (i32.add (local.get $p) (i32.add (i32.const 16) (i32.shl (local.get $n) (i32.const 2))))))
        (else
          (memory.fill (i32.add (local.get $p) (i32.add (i32.const 16) (i32.shl (local.get $n) (i32.const 2)))) (i32.const 0) (i32.shl (local.get $n) (i32.const 2)))
          (f64.const 0)))))

  ;; writes the n float64 at src as float32 to dst and returns their largest magnitude,
  ;; NaN if any is NaN (so that such a scale fails $fits). pmax (one instruction, NaN-blind)
  ;; and a separate NaN mask keep the loop off f64x2.max's long dependency chain.
  (func $narrow (param $src i32) (param $n i32) (param $dst i32) (result f64)
    (local $end i32) (local $tail i32) (local $v v128) (local $w v128) (local $m0 v128) (local $m1 v128) (local $nan v128)
    (local $f f64) (local $max f64)
    (local.set $tail (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 3))))
    (local.set $end (i32.add (local.get $src) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (local.set $v (v128.load align=4 (local.get $src)))
        (local.set $w (v128.load offset=16 align=4 (local.get $src)))
        (local.set $m0 (f64x2.pmax (local.get $m0) (f64x2.abs (local.get $v))))
        (local.set $m1 (f64x2.pmax (local.get $m1) (f64x2.abs (local.get $w))))
        (local.set $nan (v128.or (local.get $nan)
          (v128.or (f64x2.ne (local.get $v) (local.get $v)) (f64x2.ne (local.get $w) (local.get $w)))))
        (v128.store align=4 (local.get $dst)
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (f32x4.demote_f64x2_zero (local.get $v)) (f32x4.demote_f64x2_zero (local.get $w))))
        (local.set $src (i32.add (local.get $src) (i32.const 32)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (br $next)))
    (local.set $m0 (f64x2.pmax (local.get $m0) (local.get $m1)))
    (local.set $max (select (f64.const nan) (f64.max (f64x2.extract_lane 0 (local.get $m0)) (f64x2.extract_lane 1 (local.get $m0)))
      (v128.any_true (local.get $nan))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $tail)))
        (local.set $f (f64.load (local.get $src)))
        (local.set $max (f64.max (local.get $max) (f64.abs (local.get $f))))
        (f32.store (local.get $dst) (f32.demote_f64 (local.get $f)))
        (local.set $src (i32.add (local.get $src) (i32.const 8)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (br $next)))
    (local.get $max))

  ;; r = 1/sqrt(s + eps), or 1/(sqrt(s) + eps) when eps is outside. With eps = 0 an
  ;; all-zero row gives r = Inf and y = 0·Inf = NaN, as the contract asks.
  (func $rstd (param $s f64) (param $eps f64) (param $epsOutside i32) (result f64)
    (if (result f64) (local.get $epsOutside)
      (then (f64.div (f64.const 1) (f64.add (f64.sqrt (local.get $s)) (local.get $eps))))
      (else (f64.div (f64.const 1) (f64.sqrt (f64.add (local.get $s) (local.get $eps)))))))

  ;; whether a row's float32 output is within the contract (see the top); NaN fails.
  ;; bound ≥ max|x - μ|: with r ≥ 2^-120 and r·|x - μ| ≤ sqrt(n) nothing overflows, and
  ;; r·max|g| ≤ 2^130 keeps float32's subnormal spacing (2^-149) negligible in y.
  (func $fits (param $mu f64) (param $r f64) (param $bound f64) (param $maxG f64) (param $maxB f64) (result i32)
    (i32.and
      (i32.and
        (i32.and (f64.ge (local.get $r) (f64.const 0x1p-120)) (f64.le (local.get $r) (f64.const 0x1p120)))
        (f64.le (f64.add (f64.abs (local.get $mu)) (local.get $bound)) (f64.const 0x1p120)))
      (i32.and
        (i32.and (f64.le (local.get $maxG) (f64.const 0x1p100)) (f64.le (local.get $maxB) (f64.const 16)))
        (f64.le (f64.mul (local.get $r) (local.get $maxG)) (f64.const 0x1p130)))))

  (func $lanes (param $v v128) (result f64)
    (f64.add (f64x2.extract_lane 0 (local.get $v)) (f64x2.extract_lane 1 (local.get $v))))

  ;; Σ z² over the n float32 at z, in the chains of $scaleSquares
  (func $squares (param $z i32) (param $n i32) (result f64)
    (local $end i32) (local $tail i32) (local $v v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128) (local $q f64) (local $f f64)
    (local.set $tail (i32.add (local.get $z) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $z) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $end)))
        (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $v) (local.get $v))))
        (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $v) (local.get $v))))
        (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))))
        (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $v) (local.get $v))))
        (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))))
        (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $v) (local.get $v))))
        (local.set $z (i32.add (local.get $z) (i32.const 32)))
        (br $next)))
    (local.set $q (call $lanes (f64x2.add (f64x2.add (local.get $q0) (local.get $q1)) (f64x2.add (local.get $q2) (local.get $q3)))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $tail)))
        (local.set $f (f64.promote_f32 (f32.load (local.get $z))))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $f) (local.get $f))))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (br $next)))
    (local.get $q))

  ;; y = x·r·g (+ β) in float32 over the n float32 at x (g: prepared float32 scale, then
  ;; bias), and returns Σ z² as $squares does. Each iteration reads row i + 1 before it
  ;; stores row i: y and the next row are often a multiple of 4 KiB apart, and a load
  ;; issued after a store to the same 4 KiB offset waits for it.
  (func $scaleSquares (param $x i32) (param $y i32) (param $g i32) (param $n i32) (param $r f32) (param $z i32) (param $bias i32)
    (result f64)
    (local $end i32) (local $tail i32) (local $b i32) (local $k v128) (local $v v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128) (local $q f64) (local $f f64) (local $o f32)
    (local.set $k (f32x4.splat (local.get $r)))
    (local.set $b (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (if (local.get $bias)
      (then
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))))
            (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))))
            (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $v) (local.get $v))))
            (v128.store align=4 (local.get $y) (f32x4.add (f32x4.mul (f32x4.mul (v128.load align=4 (local.get $x)) (local.get $k))
              (v128.load align=4 (local.get $g))) (v128.load align=4 (local.get $b))))
            (v128.store offset=16 align=4 (local.get $y) (f32x4.add (f32x4.mul (f32x4.mul (v128.load offset=16 align=4 (local.get $x)) (local.get $k))
              (v128.load offset=16 align=4 (local.get $g))) (v128.load offset=16 align=4 (local.get $b))))
            (local.set $x (i32.add (local.get $x) (i32.const 32)))
            (local.set $y (i32.add (local.get $y) (i32.const 32)))
            (local.set $z (i32.add (local.get $z) (i32.const 32)))
            (local.set $g (i32.add (local.get $g) (i32.const 32)))
            (local.set $b (i32.add (local.get $b) (i32.const 32)))
            (br $next))))
      (else
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))))
            (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $v) (local.get $v))))
            (local.set $v (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))))
            (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $v) (local.get $v))))
            (v128.store align=4 (local.get $y) (f32x4.mul (f32x4.mul (v128.load align=4 (local.get $x)) (local.get $k))
              (v128.load align=4 (local.get $g))))
            (v128.store offset=16 align=4 (local.get $y) (f32x4.mul (f32x4.mul (v128.load offset=16 align=4 (local.get $x)) (local.get $k))
              (v128.load offset=16 align=4 (local.get $g))))
            (local.set $x (i32.add (local.get $x) (i32.const 32)))
            (local.set $y (i32.add (local.get $y) (i32.const 32)))
            (local.set $z (i32.add (local.get $z) (i32.const 32)))
            (local.set $g (i32.add (local.get $g) (i32.const 32)))
            (br $next)))))
    (local.set $q (call $lanes (f64x2.add (f64x2.add (local.get $q0) (local.get $q1)) (f64x2.add (local.get $q2) (local.get $q3)))))
    (local.set $b (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (local.set $f (f64.promote_f32 (f32.load (local.get $z))))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $f) (local.get $f))))
        (local.set $o (f32.mul (f32.mul (f32.load (local.get $x)) (local.get $r)) (f32.load (local.get $g))))
        (if (local.get $bias) (then (local.set $o (f32.add (local.get $o) (f32.load (local.get $b))))))
        (f32.store (local.get $y) (local.get $o))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (local.set $g (i32.add (local.get $g) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (br $next)))
    (local.get $q))

  ;; (Σ d, Σ d²) with d = z - shift over the n float32 at z, in the chains of
  ;; $shiftScaleDeviations
  (func $deviations (param $z i32) (param $n i32) (param $shift f64) (result f64 f64)
    (local $end i32) (local $tail i32) (local $c v128) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $q0 v128) (local $q1 v128) (local $s f64) (local $q f64) (local $e f64)
    (local.set $c (f64x2.splat (local.get $shift)))
    (local.set $tail (i32.add (local.get $z) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $z) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $end)))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))) (local.get $c)))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))) (local.get $c)))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))) (local.get $c)))
        (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
        (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))) (local.get $c)))
        (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
        (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
        (local.set $z (i32.add (local.get $z) (i32.const 32)))
        (br $next)))
    (local.set $s (call $lanes (f64x2.add (local.get $a0) (local.get $a1))))
    (local.set $q (call $lanes (f64x2.add (local.get $q0) (local.get $q1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $z) (local.get $tail)))
        (local.set $e (f64.sub (f64.promote_f32 (f32.load (local.get $z))) (local.get $shift)))
        (local.set $s (f64.add (local.get $s) (local.get $e)))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $e) (local.get $e))))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (br $next)))
    (local.get $s) (local.get $q))

  ;; y = ((x - μhi) - μlo)·r·g (+ β) in float32 over the n float32 at x, and returns
  ;; (Σ d, Σ d²) for z as $deviations does; row i + 1 is read first, as in $scaleSquares
  (func $shiftScaleDeviations (param $x i32) (param $y i32) (param $g i32) (param $n i32)
    (param $muHi f32) (param $muLo f32) (param $r f32) (param $z i32) (param $shift f64) (param $bias i32)
    (result f64 f64)
    (local $end i32) (local $tail i32) (local $b i32) (local $mh v128) (local $ml v128) (local $k v128) (local $c v128) (local $d v128)
    (local $a0 v128) (local $a1 v128) (local $q0 v128) (local $q1 v128) (local $s f64) (local $q f64) (local $e f64) (local $o f32)
    (local.set $mh (f32x4.splat (local.get $muHi)))
    (local.set $ml (f32x4.splat (local.get $muLo)))
    (local.set $k (f32x4.splat (local.get $r)))
    (local.set $c (f64x2.splat (local.get $shift)))
    (local.set $b (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $end (i32.add (local.get $x) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (if (local.get $bias)
      (then
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))) (local.get $c)))
            (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))) (local.get $c)))
            (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))) (local.get $c)))
            (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))) (local.get $c)))
            (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
            (v128.store align=4 (local.get $y)
              (f32x4.add (f32x4.mul (f32x4.mul (f32x4.sub (f32x4.sub (v128.load align=4 (local.get $x)) (local.get $mh)) (local.get $ml))
                (local.get $k)) (v128.load align=4 (local.get $g))) (v128.load align=4 (local.get $b))))
            (v128.store offset=16 align=4 (local.get $y)
              (f32x4.add (f32x4.mul (f32x4.mul (f32x4.sub (f32x4.sub (v128.load offset=16 align=4 (local.get $x)) (local.get $mh)) (local.get $ml))
                (local.get $k)) (v128.load offset=16 align=4 (local.get $g))) (v128.load offset=16 align=4 (local.get $b))))
            (local.set $x (i32.add (local.get $x) (i32.const 32)))
            (local.set $y (i32.add (local.get $y) (i32.const 32)))
            (local.set $z (i32.add (local.get $z) (i32.const 32)))
            (local.set $g (i32.add (local.get $g) (i32.const 32)))
            (local.set $b (i32.add (local.get $b) (i32.const 32)))
            (br $next))))
      (else
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $z))) (local.get $c)))
            (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $z))) (local.get $c)))
            (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 align=4 (local.get $z))) (local.get $c)))
            (local.set $a0 (f64x2.add (local.get $a0) (local.get $d)))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $d) (local.get $d))))
            (local.set $d (f64x2.sub (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 align=4 (local.get $z))) (local.get $c)))
            (local.set $a1 (f64x2.add (local.get $a1) (local.get $d)))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $d) (local.get $d))))
            (v128.store align=4 (local.get $y)
              (f32x4.mul (f32x4.mul (f32x4.sub (f32x4.sub (v128.load align=4 (local.get $x)) (local.get $mh)) (local.get $ml))
                (local.get $k)) (v128.load align=4 (local.get $g))))
            (v128.store offset=16 align=4 (local.get $y)
              (f32x4.mul (f32x4.mul (f32x4.sub (f32x4.sub (v128.load offset=16 align=4 (local.get $x)) (local.get $mh)) (local.get $ml))
                (local.get $k)) (v128.load offset=16 align=4 (local.get $g))))
            (local.set $x (i32.add (local.get $x) (i32.const 32)))
            (local.set $y (i32.add (local.get $y) (i32.const 32)))
            (local.set $z (i32.add (local.get $z) (i32.const 32)))
            (local.set $g (i32.add (local.get $g) (i32.const 32)))
            (br $next)))))
    (local.set $s (call $lanes (f64x2.add (local.get $a0) (local.get $a1))))
    (local.set $q (call $lanes (f64x2.add (local.get $q0) (local.get $q1))))
    (local.set $b (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (local.set $e (f64.sub (f64.promote_f32 (f32.load (local.get $z))) (local.get $shift)))
        (local.set $s (f64.add (local.get $s) (local.get $e)))
        (local.set $q (f64.add (local.get $q) (f64.mul (local.get $e) (local.get $e))))
        (local.set $o (f32.mul (f32.mul (f32.sub (f32.sub (f32.load (local.get $x)) (local.get $muHi)) (local.get $muLo))
          (local.get $r)) (f32.load (local.get $g))))
        (if (local.get $bias) (then (local.set $o (f32.add (local.get $o) (f32.load (local.get $b))))))
        (f32.store (local.get $y) (local.get $o))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (local.set $z (i32.add (local.get $z) (i32.const 4)))
        (local.set $g (i32.add (local.get $g) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (br $next)))
    (local.get $s) (local.get $q))

  ;; y = (x - shift)·r·g + β in float64 (scale and bias float64; b = 0: no β), rounded
  ;; once to float32
  (func $storeRow64 (param $x i32) (param $y i32) (param $g i32) (param $b i32) (param $n i32) (param $shift f64) (param $r f64)
    (local $tail i32) (local $f f64)
    (local.set $tail (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $x) (local.get $tail)))
        (local.set $f (f64.mul (f64.mul (f64.sub (f64.promote_f32 (f32.load (local.get $x))) (local.get $shift)) (local.get $r)) (f64.load (local.get $g))))
        (if (local.get $b) (then
          (local.set $f (f64.add (local.get $f) (f64.load (local.get $b))))
          (local.set $b (i32.add (local.get $b) (i32.const 8)))))
        (f32.store (local.get $y) (f32.demote_f64 (local.get $f)))
        (local.set $x (i32.add (local.get $x) (i32.const 4)))
        (local.set $y (i32.add (local.get $y) (i32.const 4)))
        (local.set $g (i32.add (local.get $g) (i32.const 8)))
        (br $next))))

  (func (export "rmsnormF32")
    (param $x i32) (param $y i32) (param $g i32) (param $b i32) (param $p i32) (param $rstdOut i32)
    (param $n i32) (param $row i32) (param $rowEnd i32) (param $eps f64) (param $epsOutside i32)
    (local $bytes i32) (local $next i32) (local $q f64) (local $r f64)
    (if (i32.ge_u (local.get $row) (local.get $rowEnd)) (then (return)))
    (local.set $bytes (i32.shl (local.get $n) (i32.const 2)))
    (local.set $x (i32.add (local.get $x) (i32.mul (local.get $row) (local.get $bytes))))
    (local.set $y (i32.add (local.get $y) (i32.mul (local.get $row) (local.get $bytes))))
    (local.set $q (call $squares (local.get $x) (local.get $n)))
    (loop $rows
      (local.set $r (call $rstd (f64.div (local.get $q) (f64.convert_i32_u (local.get $n))) (local.get $eps) (local.get $epsOutside)))
      (if (local.get $rstdOut)
        (then (f32.store (i32.add (local.get $rstdOut) (i32.shl (local.get $row) (i32.const 2))) (f32.demote_f64 (local.get $r)))))
      (local.set $row (i32.add (local.get $row) (i32.const 1)))
      ;; the last row sums itself again, for nothing, to keep one loop
      (local.set $next (select (i32.add (local.get $x) (local.get $bytes)) (local.get $x)
        (i32.lt_u (local.get $row) (local.get $rowEnd))))
      (local.set $q
        (if (result f64) (call $fits (f64.const 0) (local.get $r) (f64.const 0) (f64.load (local.get $p)) (f64.load offset=8 (local.get $p)))
          (then
            (call $scaleSquares (local.get $x) (local.get $y) (i32.add (local.get $p) (i32.const 16)) (local.get $n)
              (f32.demote_f64 (local.get $r)) (local.get $next) (local.get $b)))
          (else
            (call $storeRow64 (local.get $x) (local.get $y) (local.get $g) (local.get $b) (local.get $n) (f64.const 0) (local.get $r))
            (call $squares (local.get $next) (local.get $n)))))
      (local.set $x (local.get $next))
      (local.set $y (i32.add (local.get $y) (local.get $bytes)))
      (br_if $rows (i32.lt_u (local.get $row) (local.get $rowEnd)))))

  (func (export "layernormF32")
    (param $x i32) (param $y i32) (param $g i32) (param $b i32) (param $p i32) (param $meanOut i32) (param $rstdOut i32)
    (param $n i32) (param $row i32) (param $rowEnd i32) (param $eps f64) (param $epsOutside i32)
    (local $bytes i32) (local $nf f64) (local $next i32) (local $shift f64) (local $sd f64) (local $sq f64)
    (local $dm f64) (local $mu f64) (local $s f64) (local $r f64) (local $muHi f32)
    (if (i32.ge_u (local.get $row) (local.get $rowEnd)) (then (return)))
    (local.set $bytes (i32.shl (local.get $n) (i32.const 2)))
    (local.set $nf (f64.convert_i32_u (local.get $n)))
    (local.set $x (i32.add (local.get $x) (i32.mul (local.get $row) (local.get $bytes))))
    (local.set $y (i32.add (local.get $y) (i32.mul (local.get $row) (local.get $bytes))))
    (local.set $shift (f64.promote_f32 (f32.load (local.get $x))))
    (call $deviations (local.get $x) (local.get $n) (local.get $shift))
    (local.set $sq)
    (local.set $sd)
    (loop $rows
      ;; numerics: one pass with the row's first element as shift, d = x - x₀, gives
      ;; μ = x₀ + Σd/n and s = (Σd² - Σd·(Σd/n))/n, never E[x²] - E[x]². x₀ lies within
      ;; sqrt(n·s) of μ, so the cancellation (Σd/n)²/s is at most n, which float64 sums
      ;; absorb; past 2^10 (x₀ an outlier) the row, still in L1, gets the corrected
      ;; two-pass of layernorm.ts anyway: Σd and Σd² again about μ, Σd correcting μ.
      ;; Rounding can leave s a hair below 0 for a constant row; max(0, ·) keeps NaN.
      (local.set $dm (f64.div (local.get $sd) (local.get $nf)))
      (local.set $mu (f64.add (local.get $shift) (local.get $dm)))
      (local.set $s (f64.max (f64.const 0) (f64.div (f64.sub (local.get $sq) (f64.mul (local.get $sd) (local.get $dm))) (local.get $nf))))
      (if (f64.gt (f64.mul (local.get $dm) (local.get $dm)) (f64.mul (f64.const 1024) (local.get $s)))
        (then
          (call $deviations (local.get $x) (local.get $n) (local.get $mu))
          (local.set $sq)
          (local.set $sd)
          (local.set $dm (f64.div (local.get $sd) (local.get $nf)))
          (local.set $mu (f64.add (local.get $mu) (local.get $dm)))
          (local.set $s (f64.max (f64.const 0) (f64.div (f64.sub (local.get $sq) (f64.mul (local.get $sd) (local.get $dm))) (local.get $nf))))))
      (local.set $r (call $rstd (local.get $s) (local.get $eps) (local.get $epsOutside)))
      (if (local.get $meanOut)
        (then (f32.store (i32.add (local.get $meanOut) (i32.shl (local.get $row) (i32.const 2))) (f32.demote_f64 (local.get $mu)))))
      (if (local.get $rstdOut)
        (then (f32.store (i32.add (local.get $rstdOut) (i32.shl (local.get $row) (i32.const 2))) (f32.demote_f64 (local.get $r)))))
      (local.set $row (i32.add (local.get $row) (i32.const 1)))
      ;; the last row sums itself again, for nothing, to keep one loop
      (local.set $next (select (i32.add (local.get $x) (local.get $bytes)) (local.get $x)
        (i32.lt_u (local.get $row) (local.get $rowEnd))))
      (local.set $shift (f64.promote_f32 (f32.load (local.get $next))))
      (if (result f64 f64)
          (call $fits (local.get $mu) (local.get $r) (f64.sqrt (f64.mul (local.get $nf) (local.get $s)))
            (f64.load (local.get $p)) (f64.load offset=8 (local.get $p)))
        (then
          (local.set $muHi (f32.demote_f64 (local.get $mu)))
          (call $shiftScaleDeviations (local.get $x) (local.get $y) (i32.add (local.get $p) (i32.const 16)) (local.get $n)
            (local.get $muHi) (f32.demote_f64 (f64.sub (local.get $mu) (f64.promote_f32 (local.get $muHi))))
            (f32.demote_f64 (local.get $r)) (local.get $next) (local.get $shift) (local.get $b)))
        (else
          (call $storeRow64 (local.get $x) (local.get $y) (local.get $g) (local.get $b) (local.get $n) (local.get $mu) (local.get $r))
          (call $deviations (local.get $next) (local.get $n) (local.get $shift))))
      (local.set $sq)
      (local.set $sd)
      (local.set $x (local.get $next))
      (local.set $y (i32.add (local.get $y) (local.get $bytes)))
      (br_if $rows (i32.lt_u (local.get $row) (local.get $rowEnd)))))

  ;; bfloat16 is the top half of a float32: widening shifts the bits up. src may sit at
  ;; any byte offset (a request body's bin data); dst is 4-byte aligned.
  (func (export "widenBf16") (param $src i32) (param $dst i32) (param $count i32)
    (local $end i32) (local $v v128)
    (local.set $end (i32.add (local.get $src) (i32.shl (i32.and (local.get $count) (i32.const -8)) (i32.const 1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (local.set $v (v128.load align=1 (local.get $src)))
        (v128.store align=4 (local.get $dst) (i32x4.shl (i32x4.extend_low_i16x8_u (local.get $v)) (i32.const 16)))
        (v128.store offset=16 align=4 (local.get $dst) (i32x4.shl (i32x4.extend_high_i16x8_u (local.get $v)) (i32.const 16)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
        (br $next)))
    (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $count) (i32.const 7)) (i32.const 1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (i32.store (local.get $dst) (i32.shl (i32.load16_u align=1 (local.get $src)) (i32.const 16)))
        (local.set $src (i32.add (local.get $src) (i32.const 2)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (br $next))))

  ;; float32 bits → bfloat16 bits, rounded to nearest, ties to even: (b + 0x7fff + lsb) >> 16,
  ;; whose carry turns the largest values into ±Inf; a NaN keeps its top bits, made quiet.
  ;; src is 4-byte aligned, dst 2-byte aligned. 8 elements an iteration, written out in full
  ;; (a helper per 4 lanes was not inlined: the loop took 1.8 times as long).
  (func (export "narrowBf16") (param $src i32) (param $dst i32) (param $count i32)
    (local $end i32) (local $b i32) (local $v v128) (local $w v128)
    (local $half v128) (local $one v128) (local $abs v128) (local $inf v128) (local $quiet v128)
    (local.set $half (i32x4.splat (i32.const 0x7fff)))
    (local.set $one (i32x4.splat (i32.const 1)))
    (local.set $abs (i32x4.splat (i32.const 0x7fffffff)))
    (local.set $inf (i32x4.splat (i32.const 0x7f800000)))
    (local.set $quiet (i32x4.splat (i32.const 0x40)))
    (local.set $end (i32.add (local.get $src) (i32.shl (i32.and (local.get $count) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (local.set $v (v128.load align=4 (local.get $src)))
        (local.set $w (v128.load offset=16 align=4 (local.get $src)))
        (local.set $v
          (v128.bitselect
            (v128.or (i32x4.shr_u (local.get $v) (i32.const 16)) (local.get $quiet))
            (i32x4.shr_u (i32x4.add (i32x4.add (local.get $v) (local.get $half))
              (v128.and (i32x4.shr_u (local.get $v) (i32.const 16)) (local.get $one))) (i32.const 16))
            (i32x4.gt_s (v128.and (local.get $v) (local.get $abs)) (local.get $inf))))
        (local.set $w
          (v128.bitselect
            (v128.or (i32x4.shr_u (local.get $w) (i32.const 16)) (local.get $quiet))
            (i32x4.shr_u (i32x4.add (i32x4.add (local.get $w) (local.get $half))
              (v128.and (i32x4.shr_u (local.get $w) (i32.const 16)) (local.get $one))) (i32.const 16))
            (i32x4.gt_s (v128.and (local.get $w) (local.get $abs)) (local.get $inf))))
        ;; every lane is in [0, 0xffff] by now, so the saturating narrow is exact
        (v128.store align=2 (local.get $dst) (i16x8.narrow_i32x4_u (local.get $v) (local.get $w)))
        (local.set $src (i32.add (local.get $src) (i32.const 32)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (br $next)))
    (local.set $end (i32.add (local.get $end) (i32.shl (i32.and (local.get $count) (i32.const 7)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (local.set $b (i32.load (local.get $src)))
        (i32.store16 (local.get $dst)
          (select
            (i32.or (i32.shr_u (local.get $b) (i32.const 16)) (i32.const 0x40))
            (i32.shr_u (i32.add (i32.add (local.get $b) (i32.const 0x7fff)) (i32.and (i32.shr_u (local.get $b) (i32.const 16)) (i32.const 1))) (i32.const 16))
            (i32.gt_u (i32.and (local.get $b) (i32.const 0x7fffffff)) (i32.const 0x7f800000))))
        (local.set $src (i32.add (local.get $src) (i32.const 4)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 2)))
        (br $next))))

  ;; n bytes from src to dst, both at any byte offset and not overlapping: an answer's tensors
  ;; gathered into one slab. memory.copy is a plain memmove; a JavaScript copy out of shared
  ;; memory goes byte by byte unless both ends agree modulo 8 (V8's relaxed copy), 20 times slower
  (func (export "copyBytes") (param $dst i32) (param $src i32) (param $n i32)
    (memory.copy (local.get $dst) (local.get $src) (local.get $n))))

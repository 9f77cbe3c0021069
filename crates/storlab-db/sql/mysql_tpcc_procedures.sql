-- TPC-C transactions for MySQL and MariaDB as stored procedures, with the
-- names and the calling convention of HammerDB's MySQL TPROC-C: one CALL per
-- transaction, its results left in OUT parameters (session variables on the
-- client side), no result set read, and each procedure opening and
-- committing its own transaction. Written from the TPC-C v5.11
-- specification, clauses 2.4-2.8. Unlike HammerDB's, the client draws every
-- input itself (New-Order's items, supply warehouses and quantities as
-- comma-separated lists), so MySQL, PostgreSQL and SQLite run the same
-- transactions for the same seed. Needs mysql_tpcc_schema.sql.
--
-- An unused item (New-Order's 1 % rollback, clause 2.4.2.3) signals 'storlab-tpcc: unused item', which rolls the transaction back and which the
-- client counts as an intended rollback. Any error rolls back and is passed on.
-- Statements are separated by lines holding only `-- ;;`.
DROP PROCEDURE IF EXISTS NEWORD;
-- ;;
CREATE PROCEDURE NEWORD(p_w_id INT, p_d_id INT, p_c_id INT,
    p_i_ids VARCHAR(200), p_supply_w_ids VARCHAR(200), p_quantities VARCHAR(100),
    OUT no_c_discount DECIMAL(4,4), OUT no_c_last VARCHAR(16), OUT no_c_credit CHAR(2),
    OUT no_d_tax DECIMAL(4,4), OUT no_w_tax DECIMAL(4,4), OUT no_o_id INT)
BEGIN
  DECLARE v_ol_cnt INT;
  DECLARE v_n INT DEFAULT 1;
  DECLARE v_i_id INT;
  DECLARE v_w INT;
  DECLARE v_q INT;
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_dist CHAR(24);
  DECLARE v_all_local INT DEFAULT 1;
  DECLARE v_missing INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET v_ol_cnt = LENGTH(p_i_ids) - LENGTH(REPLACE(p_i_ids, ',', '')) + 1;
  START TRANSACTION;
  SELECT w_tax INTO no_w_tax FROM warehouse WHERE w_id = p_w_id;
  SELECT d_next_o_id, d_tax INTO no_o_id, no_d_tax FROM district
   WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT c_discount, c_last, c_credit INTO no_c_discount, no_c_last, no_c_credit
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  WHILE v_n <= v_ol_cnt DO
    SET v_i_id = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_i_ids, ',', v_n), ',', -1) AS SIGNED);
    SET v_w = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply_w_ids, ',', v_n), ',', -1) AS SIGNED);
    SET v_q = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_quantities, ',', v_n), ',', -1) AS SIGNED);
    IF v_w <> p_w_id THEN SET v_all_local = 0; END IF;
    SET v_price = NULL;
    SELECT i_price INTO v_price FROM item WHERE i_id = v_i_id;
    IF v_price IS NULL THEN
      SET v_missing = v_i_id;
    ELSE
      SELECT CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
               WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
               WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        INTO v_dist FROM stock WHERE s_w_id = v_w AND s_i_id = v_i_id FOR UPDATE;
      UPDATE stock SET
        s_quantity = CASE WHEN s_quantity >= v_q + 10 THEN s_quantity - v_q ELSE s_quantity - v_q + 91 END,
        s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + IF(v_w <> p_w_id, 1, 0)
       WHERE s_w_id = v_w AND s_i_id = v_i_id;
      INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                              ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (no_o_id, p_d_id, p_w_id, v_n, v_i_id, v_w, NULL, v_q, v_q * v_price, v_dist);
    END IF;
    SET v_n = v_n + 1;
  END WHILE;
  IF v_missing <> 0 THEN
    -- The handler above rolls back (one ROLLBACK, as Com_rollback counts).
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'storlab-tpcc: unused item';
  END IF;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (no_o_id, p_d_id, p_w_id, p_c_id, NOW(), NULL, v_ol_cnt, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (no_o_id, p_d_id, p_w_id);
  COMMIT;
END
-- ;;
DROP PROCEDURE IF EXISTS PAYMENT;
-- ;;
-- Payment (clause 2.5.2): by last name, the customer at position ceil(n/2)
-- ordered by first name. No matching customer changes nothing.
CREATE PROCEDURE PAYMENT(p_w_id INT, p_d_id INT, p_c_w_id INT, p_c_d_id INT,
    p_c_id INT, p_c_last VARCHAR(16), p_by_name INT, p_h_amount DECIMAL(6,2),
    OUT out_c_id INT, OUT out_c_balance DECIMAL(12,2), OUT out_c_credit CHAR(2))
BEGIN
  DECLARE v_n INT;
  DECLARE v_w_name VARCHAR(10);
  DECLARE v_d_name VARCHAR(10);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET out_c_id = p_c_id;
  START TRANSACTION;
  IF p_by_name = 1 THEN
    SELECT count(*) INTO v_n FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    SET out_c_id = NULL;
    IF v_n > 0 THEN
      SET v_n = (v_n + 1) DIV 2 - 1;
      SELECT c_id INTO out_c_id FROM customer
       WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
       ORDER BY c_first LIMIT v_n, 1;
    END IF;
  END IF;
  IF out_c_id IS NOT NULL THEN
    UPDATE customer SET
      c_balance = c_balance - p_h_amount,
      c_ytd_payment = c_ytd_payment + p_h_amount,
      c_payment_cnt = c_payment_cnt + 1,
      c_data = IF(c_credit = 'BC',
                  LEFT(CONCAT_WS(' ', out_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_amount, '| ', c_data), 500),
                  c_data)
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = out_c_id;
    SELECT c_balance, c_credit INTO out_c_balance, out_c_credit FROM customer
     WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = out_c_id;
    UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT d_name INTO v_d_name FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id;
    SELECT w_name INTO v_w_name FROM warehouse WHERE w_id = p_w_id;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (out_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, NOW(), p_h_amount, CONCAT(v_w_name, '    ', v_d_name));
  END IF;
  COMMIT;
END
-- ;;
DROP PROCEDURE IF EXISTS OSTAT;
-- ;;
-- Order-Status (clause 2.6.2): the customer's last order and its lines.
CREATE PROCEDURE OSTAT(p_w_id INT, p_d_id INT, p_c_id INT, p_c_last VARCHAR(16), p_by_name INT,
    OUT os_c_id INT, OUT os_c_balance DECIMAL(12,2), OUT os_o_id INT, OUT os_o_carrier_id INT,
    OUT os_lines INT, OUT os_amount DECIMAL(12,2))
BEGIN
  DECLARE v_n INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET os_c_id = p_c_id;
  START TRANSACTION;
  IF p_by_name = 1 THEN
    SELECT count(*) INTO v_n FROM customer
     WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    SET os_c_id = NULL;
    IF v_n > 0 THEN
      SET v_n = (v_n + 1) DIV 2 - 1;
      SELECT c_id INTO os_c_id FROM customer
       WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
       ORDER BY c_first LIMIT v_n, 1;
    END IF;
  END IF;
  SELECT c_balance INTO os_c_balance FROM customer
   WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = os_c_id;
  SELECT max(o_id) INTO os_o_id FROM orders
   WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = os_c_id;
  SELECT o_carrier_id INTO os_o_carrier_id FROM orders
   WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_id = os_o_id;
  SELECT count(*), sum(ol_amount) INTO os_lines, os_amount FROM order_line
   WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = os_o_id;
  COMMIT;
END
-- ;;
DROP PROCEDURE IF EXISTS DELIVERY;
-- ;;
-- Delivery (clause 2.7.4): the oldest undelivered order of each district,
-- districts in order; a district with none is skipped.
CREATE PROCEDURE DELIVERY(p_w_id INT, p_carrier_id INT)
BEGIN
  DECLARE v_d INT DEFAULT 1;
  DECLARE v_o_id INT;
  DECLARE v_c_id INT;
  DECLARE v_total DECIMAL(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  WHILE v_d <= 10 DO
    SET v_o_id = NULL;
    SELECT min(no_o_id) INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d;
    IF v_o_id IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
      SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
      UPDATE orders SET o_carrier_id = p_carrier_id WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
      UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
      SELECT sum(ol_amount) INTO v_total FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
      UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
       WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
END
-- ;;
DROP PROCEDURE IF EXISTS SLEV;
-- ;;
-- Stock-Level (clause 2.8.2): distinct items of the district's last 20
-- orders whose stock is below the threshold.
CREATE PROCEDURE SLEV(p_w_id INT, p_d_id INT, p_threshold INT, OUT stock_count INT)
BEGIN
  DECLARE v_o_id INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(DISTINCT s_i_id) INTO stock_count FROM order_line, stock
   WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_o_id AND ol_o_id >= v_o_id - 20
     AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
END
